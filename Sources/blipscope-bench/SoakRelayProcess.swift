import Soak

/// The soak's relay under test: a ``RelayProcess`` child started with the soak's arguments.
final class SoakRelayProcess: SoakRelay, @unchecked Sendable {
    private let relay: RelayProcess

    init(launch: SoakRelayLaunch) throws {
        relay = try RelayProcess(arguments: launch.arguments)
    }

    var port: Int { relay.port }
    var processIdentifier: Int32 { relay.process.processIdentifier }
    func stop() async { relay.stop() }
}
