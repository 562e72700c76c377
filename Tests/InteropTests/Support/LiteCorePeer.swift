import Foundation
import NIOConcurrencyHelpers

/// A LiteCore passive peer: LiteCore's own HTTP listener and replicator on one database, what a
/// Couchbase Lite peer-to-peer listener is. Opt-in: `BLIPSCOPE_LITECORE_PEER` names a binary
/// taking `--port P --db PATH.cblite2 --create` and printing `listening on 127.0.0.1:P` when
/// ready; built from public source outside this repository.
final class LiteCorePeer: @unchecked Sendable {
    static let path = ProcessInfo.processInfo.environment["BLIPSCOPE_LITECORE_PEER"]
    static var available: Bool { path.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    let port: Int
    /// The database's name, the last path component of its URL.
    let name: String
    private let process = Process()
    private let pipe = Pipe()

    /// Starts the peer on a free port with a new database `name` in `directory`; returns once it
    /// listens (bounded: 30 s).
    init(name: String, in directory: URL) throws {
        self.name = name
        port = try Self.freePort()
        process.executableURL = URL(fileURLWithPath: Self.path!)
        process.arguments = ["--port", String(port), "--db", directory.appendingPathComponent("\(name).cblite2").path, "--create"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = DispatchSemaphore(value: 0)
        let seen = NIOLockedValueBox(Data())
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            let text = seen.withLockedValue { seen -> String in
                seen.append(data)
                return String(decoding: seen, as: UTF8.self)
            }
            if text.contains("listening on") { ready.signal() }
        }
        guard ready.wait(timeout: .now() + 30) == .success else {
            stop()
            throw CBLiteFailure("litecore-peer did not start listening")
        }
        pipe.fileHandleForReading.readabilityHandler = nil
    }

    var isRunning: Bool { process.isRunning }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw CBLiteFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
