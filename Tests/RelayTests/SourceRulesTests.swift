import BLIPTestSupport
import Foundation
import Testing

/// Rules of the source tree that a reader relies on, checked on every run.
@Suite("the source tree's own rules")
struct SourceRulesTests {
    /// Every Swift file under Sources/, relative to the package root, with its text.
    static func sources() throws -> [(path: String, text: String)] {
        let root = BlipscopeExecutable.packageRoot.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var files: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(BlipscopeExecutable.packageRoot.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test("no file under Sources/ is longer than 300 lines: a longer one is split by topic")
    func noSourceFileIsOver300Lines() throws {
        let files = try Self.sources()
        #expect(files.count > 100, "the walk found the sources")
        let long = files.map { ($0.path, $0.text.split(separator: "\n", omittingEmptySubsequences: false).count) }
            .filter { $0.1 > 301 }  // a last newline makes one empty line more
        #expect(long.isEmpty, "\(long.map { "\($0.0): \($0.1) lines" })")
    }

    /// The protocol's profile names (ReplicationNames' ReplicationProfile spells each once).
    static let profileNames = ["getCheckpoint", "setCheckpoint", "getCollections", "subChanges", "unsubChanges", "changes",
                               "proposeChanges", "rev", "norev", "getAttachment", "proveAttachment", "getRev", "putRev", "PING"]

    @Test("no profile name is spelled as a string literal outside ReplicationNames: code names them by their enum")
    func profileNamesAreSpelledOnce() throws {
        var spelled: [String] = []
        // RedisClient speaks Redis, whose PING command is no BLIP profile.
        for file in try Self.sources() where !file.path.hasPrefix("Sources/ReplicationNames/") && !file.path.hasPrefix("Sources/RedisClient/") {
            for (index, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.drop { $0 == " " }
                guard !code.hasPrefix("//") else { continue }
                for name in Self.profileNames where line.contains("\"\(name)\"") {
                    spelled.append("\(file.path):\(index + 1): \"\(name)\"")
                }
            }
        }
        #expect(spelled.isEmpty, "\(spelled)")
    }

    @Test("no metric name is spelled outside MetricCatalog: the registry, the dashboards' test and the soak read it")
    func metricNamesAreSpelledOnce() throws {
        let spelled = try Self.sources().filter { !$0.path.hasPrefix("Sources/MetricCatalog/") && $0.text.contains("\"blipscope_") }
        #expect(spelled.isEmpty, "\(spelled.map(\.path))")
    }
}
