import NIOCore
import ServiceLifecycle

/// `bench forward` under ServiceLifecycle: the forwarder runs until SIGINT or SIGTERM, which it
/// handles itself, so it ends on the bench's SIGINT even when it was started with SIGINT ignored
/// (a background job of a shell script inherits that, and the default action would then never
/// come): the bench waited on it forever and its report was lost.
///
/// It announces its port from here, once the service group traps the signals: a SIGINT sent as
/// soon as the announcement is read would otherwise find it still ignored.
struct ForwarderService: Service {
    let listener: Channel
    let announce: @Sendable () -> Void

    func run() async throws {
        announce()
        try? await gracefulShutdown()
        try await listener.close()
    }
}
