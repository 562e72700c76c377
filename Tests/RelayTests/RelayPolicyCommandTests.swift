import Foundation
import Testing

/// `blipscope relay --policy` as an operator runs it: the built executable.
@Suite("blipscope relay --policy, end to end")
struct RelayPolicyCommandTests {
    /// The executable next to the test bundle (any scratch path), or in the package's `.build`.
    static var executable: URL? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("blipscope")]
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("blipscope")) }
        candidates += ["debug", "release"].map { root.appendingPathComponent(".build/\($0)/blipscope") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = Self.executable  // the tests run only when it exists
        process.arguments = arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("a broken policy file: exit non-zero, the rule and field in the message, nothing listens",
          .enabled(if: executable != nil))
    func brokenPolicy() throws {
        let path = NSTemporaryDirectory() + "broken-policy-\(UUID().uuidString).yaml"
        try "rules:\n  - name: slow-revs\n    action: { rateLimit: { perSecond: 0 } }\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, errors) = try Self.run(["relay", "--listen", "127.0.0.1:0", "--policy", path])
        #expect(status != 0)
        #expect(errors.contains("error: policy \(path): rule \"slow-revs\": action.rateLimit.perSecond: must be a positive number"))
        #expect(!errors.contains("listening"))
    }

    @Test("--policy-dry-run without --policy is a usage error", .enabled(if: executable != nil))
    func dryRunAlone() throws {
        let (status, errors) = try Self.run(["relay", "--listen", "127.0.0.1:0", "--policy-dry-run"])
        #expect(status != 0)
        #expect(errors.contains("--policy-dry-run goes with --policy"))
    }

    /// Lines a child process writes, gathered as they come; waits are bounded.
    final class OutputLines: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        private let arrived = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            handle.readabilityHandler = { [self] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil }
                lock.lock()
                text += String(decoding: data, as: UTF8.self)
                lock.unlock()
                arrived.signal()
            }
        }

        /// Waits (at most `seconds` in all) until the output contains `needle` `times` times.
        func wait(for needle: String, times: Int = 1, seconds: Double = 20) -> Bool {
            let deadline = DispatchTime.now() + seconds
            while true {
                lock.lock()
                let found = text.components(separatedBy: needle).count - 1 >= times
                lock.unlock()
                if found { return true }
                if arrived.wait(timeout: deadline) == .timedOut { return false }
            }
        }
    }

    @Test("a running relay rejects a broken edit, keeps its policy, and reloads a fixed one on SIGHUP",
          .enabled(if: executable != nil))
    func reloadWhileRunning() throws {
        let path = NSTemporaryDirectory() + "live-policy-\(UUID().uuidString).yaml"
        try "connections: { rules: [{ name: tls, requireTLS: true }] }\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["relay", "--listen", "127.0.0.1:0", "--policy", path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let logLines = OutputLines(output.fileHandleForReading)
        let statusLines = OutputLines(errors.fileHandleForReading)
        try process.run()
        defer {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
        #expect(statusLines.wait(for: "listening"))
        try "rules: [{ name: typo, action: { deny: {} }, mtach: {} }]\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(logLines.wait(for: "policy rejected: rule \"typo\": mtach: unknown key"), "the 1 s poll saw the edit")
        #expect(logLines.wait(for: "keeping the previous policy"))
        try "rules: []\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(logLines.wait(for: "policy reloaded (0 rules)"))
        kill(process.processIdentifier, SIGHUP)
        #expect(logLines.wait(for: "policy reloaded (0 rules)", times: 2), "SIGHUP reloads even an unchanged file")
        #expect(process.isRunning, "SIGHUP reloads, it does not end the relay")
    }
}
