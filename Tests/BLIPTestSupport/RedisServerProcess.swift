import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `redis-server` (Debian's, /usr/bin/redis-server) that a test starts on a free loopback
/// port, in a temporary directory of its own, persisting nothing, and always stops.
///
/// Redis cannot pick an ephemeral port itself, so a free one is found by binding 127.0.0.1:0
/// and closing it; a start that loses the race for it (the server reports the address in use)
/// tries again with another. Ready means it logged "Ready to accept connections" and, on its
/// plain port, answered a PING. It can be killed, paused (SIGSTOP) and resumed, and started
/// again on the same port. Use ``with(password:tls:_:)``, which stops it even when the body
/// throws; a value let go of kills the server (RunningCommand's deinit).
public final class RedisServerProcess: @unchecked Sendable {
    public static let executable = "/usr/bin/redis-server"

    /// The TLS files of a `rediss://` server (its plain port is then closed: `--port 0`).
    public struct TLS: Sendable {
        public var certificatePath: String
        public var keyPath: String
        public var caCertificatePath: String

        public init(certificatePath: String, keyPath: String, caCertificatePath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.caCertificatePath = caCertificatePath
        }
    }

    public let port: Int
    public let password: String?
    public let tls: TLS?
    public let directory: URL
    private let lock = NSLock()
    private var running: RunningCommand?

    private init(port: Int, password: String?, tls: TLS?, directory: URL) {
        self.port = port
        self.password = password
        self.tls = tls
        self.directory = directory
    }

    /// `redis://[:PASSWORD@]127.0.0.1:PORT` (or `rediss://`).
    public var url: String {
        let credentials = password.map { ":\($0)@" } ?? ""
        return "\(tls == nil ? "redis" : "rediss")://\(credentials)127.0.0.1:\(port)"
    }

    /// The running process, for signals and its output.
    public var process: RunningCommand? { lock.withLock { running } }

    /// Starts a server, with `--requirepass` when `password` is given and TLS only when `tls` is.
    public static func start(password: String? = nil, tls: TLS? = nil) async throws -> RedisServerProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw CommandFailure("\(executable) is missing: `make setup` installs the redis-server package")
        }
        var lastFailure = ""
        for _ in 0..<5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-redis-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let server = RedisServerProcess(port: try freeLoopbackPort(), password: password, tls: tls, directory: directory)
            do {
                try await server.launch()
                return server
            } catch let failure as PortTaken {
                lastFailure = failure.output
                try? FileManager.default.removeItem(at: directory)
            } catch {
                await server.stop()
                throw error
            }
        }
        throw CommandFailure("redis-server found its port taken five times:\n\(lastFailure)")
    }

    /// Starts a server, runs `body` with it, and stops the server whether `body` threw or not.
    public static func with<T: Sendable>(password: String? = nil, tls: TLS? = nil,
                                         _ body: (RedisServerProcess) async throws -> T) async throws -> T {
        let server = try await start(password: password, tls: tls)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Starts the server again on the same port, after ``kill()`` or ``stop()``; its data is gone.
    public func restart() async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try await launch()
        } catch let failure as PortTaken {
            throw CommandFailure("redis-server could not have its port \(port) again:\n\(failure.output)")
        }
    }

    /// Kills the server (SIGKILL), as a crash would, and waits for it to be gone.
    public func kill() async throws {
        guard let command = process else { return }
        command.kill()
        _ = try await command.waitForExit(within: 30)
        lock.withLock { running = nil }
    }

    /// Stops the server from running (SIGSTOP) and returns once the kernel shows it stopped
    /// (at most 10 s): it keeps its connections, and the kernel still takes bytes and new
    /// connections for it, but it answers nothing.
    public func pause() async throws {
        guard let command = process else { throw CommandFailure("no redis-server runs to pause") }
        command.signal(SIGSTOP)
        let stat = "/proc/\(command.processIdentifier)/stat"
        for _ in 0..<1_000 {
            // The state is the first field after the executable's name in parentheses.
            if let text = try? String(contentsOfFile: stat, encoding: .utf8), let close = text.lastIndex(of: ")"),
               text[text.index(after: close)...].hasPrefix(" T") {
                return
            }
            try await Task.sleep(for: .milliseconds(10))  // polling the kernel's state, bounded
        }
        throw CommandFailure("redis-server did not stop within 10 s of SIGSTOP")
    }

    /// Lets a paused server run again (SIGCONT).
    public func resume() { process?.signal(SIGCONT) }

    /// Ends the server (SIGTERM, then SIGKILL if it is not gone within 10 s) and removes its
    /// directory. Safe to call more than once.
    public func stop() async {
        if let command = process {
            command.signal(SIGCONT)  // a paused server handles SIGTERM only once it runs
            command.signal(SIGTERM)
            if (try? await command.waitForExit(within: 10)) == nil {
                command.kill()
                _ = try? await command.waitForExit(within: 10)
            }
            lock.withLock { running = nil }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private struct PortTaken: Error { let output: String }

    private func launch() async throws {
        var arguments = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path, "--daemonize", "no"]
        if let tls {
            arguments += ["--port", "0", "--tls-port", String(port), "--tls-cert-file", tls.certificatePath,
                          "--tls-key-file", tls.keyPath, "--tls-ca-cert-file", tls.caCertificatePath, "--tls-auth-clients", "no"]
        } else {
            arguments += ["--port", String(port)]
        }
        if let password { arguments += ["--requirepass", password] }
        let command = try RunningCommand(executable: Self.executable, arguments: arguments)
        lock.withLock { running = command }
        do {
            try await command.waitForOutput(within: 30) { $0.contains("Ready to accept connections") }
        } catch {
            command.kill()
            _ = try? await command.waitForExit(within: 10)
            lock.withLock { running = nil }
            let output = command.output.text
            if output.contains("Address already in use") { throw PortTaken(output: output) }
            throw error
        }
        if tls == nil { try Self.ping(port: port) }
    }

    /// One PING over a plain socket, answered (+PONG, or -NOAUTH when a password is required)
    /// within 10 s.
    static func ping(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CommandFailure("socket failed (errno \(errno))") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw CommandFailure("cannot connect to redis-server on port \(port) (errno \(errno))") }
        let request = Array("PING\r\n".utf8)
        guard write(descriptor, request, request.count) == request.count else { throw CommandFailure("cannot send PING (errno \(errno))") }
        var reply = [UInt8](repeating: 0, count: 128)
        let count = read(descriptor, &reply, reply.count)
        let text = count > 0 ? String(decoding: reply[..<count], as: UTF8.self) : ""
        guard text.hasPrefix("+PONG") || text.hasPrefix("-NOAUTH") else {
            throw CommandFailure("redis-server on port \(port) answered PING with \(text.debugDescription)")
        }
    }

    /// A loopback port nothing listens on right now: bound to 127.0.0.1:0, read, closed.
    public static func freeLoopbackPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CommandFailure("socket failed (errno \(errno))") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else { throw CommandFailure("cannot find a free loopback port (errno \(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
