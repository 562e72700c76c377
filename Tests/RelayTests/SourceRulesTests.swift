import BLIPTestSupport
import Foundation
import ReplicationNames
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

    /// Files left out of ``propertyNamesAreSpelledOnce``: none.
    static let propertyRuleExceptions: Set<String> = []

    /// A property name as a string literal where it is a message property's key, on one line:
    /// `properties["N"]` and `props["N"]` (so `.properties["N"]` too); a dictionary literal key
    /// `["N": …` or `, "N": …` on a line that mentions `Properties`, `properties:` or assigns to
    /// `properties`/`props`; a tuple `("N", …` on a line that calls `Properties(`. Not seen: a literal
    /// split over lines, a key built at run time, a raw key compared by hand. Names come from
    /// ``PropertyName``, so a new case is covered as it is added.
    static let propertyKeyPatterns: [(pattern: NSRegularExpression, lineMentions: NSRegularExpression?)] = {
        let names = PropertyName.allCases.map { NSRegularExpression.escapedPattern(for: $0.rawValue) }.joined(separator: "|")
        func regex(_ pattern: String) -> NSRegularExpression { try! NSRegularExpression(pattern: pattern) }
        return [
            (regex(#"\b(?:properties|props)\[\s*"(\#(names))"\s*\]"#), nil),
            (regex(#"[\[,]\s*"(\#(names))"\s*:"#), regex(#"Properties|\bproperties\s*:|\b(?:properties|props)\s*=[^=]"#)),
            (regex(#"\(\s*"(\#(names))"\s*,"#), regex(#"Properties\("#)),
        ]
    }()

    /// The property names `line` spells as a key, in the contexts of ``propertyKeyPatterns``.
    static func propertyKeySpellings(in line: String) -> [String] {
        let range = NSRange(line.startIndex..., in: line)
        var found: [String] = []
        for (pattern, lineMentions) in propertyKeyPatterns {
            if let lineMentions, lineMentions.firstMatch(in: line, range: range) == nil { continue }
            for match in pattern.matches(in: line, range: range) {
                found.append(String(line[Range(match.range(at: 1), in: line)!]))
            }
        }
        return found
    }

    @Test("the property-key check sees each context it claims and not a JSON key, log field or query parameter")
    func propertyKeySpellingsAreFound() {
        let uses: [(String, [String])] = [
            (#"let domain = reply.properties["Error-Domain"] ?? "BLIP""#, ["Error-Domain"]),
            (#"if let profile { props["Profile"] = profile }"#, ["Profile"]),
            (#"var properties: Properties = ["client": client, "rev": rev]"#, ["client", "rev"]),
            (#".reply(to: request, properties: ["maxHistory": String(maxHistory)])"#, ["maxHistory"]),
            (#"properties = ["Error-Domain": error.domain, "Error-Code": String(code)]"#, ["Error-Domain", "Error-Code"]),
            (#"Properties([("id", "doc-1"), (PropertyName.rev.rawValue, "1-a"), ("sequence", "7")])"#, ["id", "sequence"]),
        ]
        for (line, names) in uses { #expect(Self.propertyKeySpellings(in: line) == names, "\(line)") }
        let others = [
            #"guard let digest = meta["digest"]?.stringValue else { return nil }"#,
            #"json.string("client", description.clientAddress)"#,
            #"errorsOnly = query["error"] == "1""#,
            #".object(["docID": .string(conflict.docID), "reason": .string(conflict.reason)])"#,
            #"fields([("event", .text("refused")), ("client", .text(refusal.clientAddress))])"#,
            #"properties[.collection] = String(index)"#,
            #"let compress = request.properties["compress"] == "true""#,
        ]
        for line in others { #expect(Self.propertyKeySpellings(in: line).isEmpty, "\(line)") }
    }

    @Test("no property name is spelled as a message property's key outside ReplicationNames: code names it by PropertyName")
    func propertyNamesAreSpelledOnce() throws {
        var spelled: [String] = []
        for file in try Self.sources()
        where !file.path.hasPrefix("Sources/ReplicationNames/") && !Self.propertyRuleExceptions.contains(file.path) {
            for (index, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard line.contains("\""), !line.drop(while: { $0 == " " }).hasPrefix("//") else { continue }
                for name in Self.propertyKeySpellings(in: String(line)) {
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
