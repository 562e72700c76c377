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
}
