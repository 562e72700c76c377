import BLIPTestSupport
import Foundation
import NIOCore
import NIOPosix

/// Debian's HAProxy (/usr/sbin/haproxy) in front of one relay, as a fleet would run it: TCP mode,
/// the relay dialed with `send-proxy-v2`, checked with `option httpchk GET /readyz` on its admin
/// port. Started in a temporary directory of its own with a generated configuration, its
/// frontend on a free loopback port (HAProxy cannot pick one itself), its stats on a unix socket
/// there; ``stop()`` always ends it.
final class HAProxyProcess: @unchecked Sendable {
    static let executable = "/usr/sbin/haproxy"

    let frontendPort: Int
    let directory: URL
    let command: RunningCommand

    var statsSocket: String { directory.appendingPathComponent("stats.sock").path }

    private init(frontendPort: Int, directory: URL, command: RunningCommand) {
        self.frontendPort = frontendPort
        self.directory = directory
        self.command = command
    }

    /// The configuration: checks every 200 ms, three failures in a row mark the relay down, one
    /// success up; a check may wait 10 s for its answer (a loaded machine's admin listener).
    static func configuration(frontendPort: Int, relayPort: Int, adminPort: Int, statsSocket: String) -> String {
        """
        global
            stats socket \(statsSocket) mode 600 level admin
        defaults
            mode tcp
            timeout connect 5s
            timeout client 120s
            timeout server 120s
            timeout check 10s
        frontend clients
            bind 127.0.0.1:\(frontendPort)
            default_backend relays
        backend relays
            option httpchk GET /readyz
            http-check expect status 200
            server r1 127.0.0.1:\(relayPort) send-proxy-v2 check port \(adminPort) inter 200ms fall 3 rise 1

        """
    }

    /// Starts HAProxy in front of the relay on `relayPort`, checked on `adminPort`; retries with
    /// another frontend port if the one found free was taken meanwhile.
    static func start(relayPort: Int, adminPort: Int) async throws -> HAProxyProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw CommandFailure("\(executable) is missing: `make setup` installs the haproxy package")
        }
        var lastFailure = ""
        for _ in 0..<5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-haproxy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let port = try RedisServerProcess.freeLoopbackPort()
            let file = directory.appendingPathComponent("haproxy.cfg")
            try configuration(frontendPort: port, relayPort: relayPort, adminPort: adminPort,
                              statsSocket: directory.appendingPathComponent("stats.sock").path)
                .write(to: file, atomically: true, encoding: .utf8)
            let command = try RunningCommand(executable: executable, arguments: ["-db", "-f", file.path])
            let haproxy = HAProxyProcess(frontendPort: port, directory: directory, command: command)
            do {
                try await haproxy.waitForStats()
                return haproxy
            } catch {
                lastFailure = command.errors.text
                await haproxy.stop()
                guard lastFailure.contains("cannot bind") || lastFailure.contains("Address already in use") else { throw error }
            }
        }
        throw CommandFailure("haproxy found its port taken five times:\n\(lastFailure)")
    }

    /// Ends HAProxy (SIGTERM, then SIGKILL) and removes its directory.
    func stop() async {
        command.signal(SIGTERM)
        if (try? await command.waitForExit(within: 10)) == nil {
            command.kill()
            _ = try? await command.waitForExit(within: 10)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The answer to one stats socket command (HAProxy closes the socket after it).
    func ask(_ command: String) async throws -> String {
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: String.self)
        do {
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { $0.pipeline.addHandler(Collector(done: promise)) }
                .connect(unixDomainSocketPath: statsSocket).get()
            try await channel.writeAndFlush(ByteBuffer(string: command + "\n")).get()
        } catch {
            promise.fail(error)  // not bound yet, or closed: no answer
        }
        return try await promise.futureResult.get()
    }

    /// The relay's state in HAProxy's eyes: the `status` and `check_status` columns of `show stat`.
    func relayState() async throws -> (status: String, check: String) {
        let csv = try await ask("show stat")
        let lines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first, let status = header.firstIndex(of: "status"), let check = header.firstIndex(of: "check_status"),
              let row = lines.first(where: { $0.count > check && $0[0] == "relays" && $0[1] == "r1" }) else {
            throw CommandFailure("no relays/r1 row in show stat:\n\(csv)")
        }
        return (row[status], row[check])
    }

    /// Waits (bounded) until HAProxy's view of the relay satisfies `predicate`: HAProxy has no
    /// event to wait on, so its stats are read every 50 ms, for at most `seconds`.
    @discardableResult
    func waitForRelay(within seconds: Double = 30,
                      _ predicate: (String, String) -> Bool) async throws -> (status: String, check: String) {
        var last = ("", "")
        for _ in 0..<Int(seconds * 20) {
            if let state = try? await relayState() {
                last = state
                if predicate(state.status, state.check) { return state }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CommandFailure("HAProxy's relay state stayed \(last) for \(seconds) s:\n\(command.errors.text.suffix(2000))")
    }

    /// Waits for the stats socket to answer: HAProxy has bound its ports.
    private func waitForStats() async throws {
        for _ in 0..<600 {
            guard command.isRunning else { throw CommandFailure("haproxy exited:\n\(command.errors.text)") }
            if (try? await ask("show info"))?.contains("Name: HAProxy") == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CommandFailure("haproxy's stats socket did not answer within 30 s")
    }

    private final class Collector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private var text = ""
        private let done: EventLoopPromise<String>

        init(done: EventLoopPromise<String>) { self.done = done }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) { text += String(buffer: unwrapInboundIn(data)) }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(text)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            done.fail(error)
            context.close(promise: nil)
        }
    }
}
