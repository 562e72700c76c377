import Foundation
import Testing
@testable import Policy

/// Inputs the fuzzer (Fuzz/, `fuzz-policy`) found crashing policy parsing, each kept as found.
@Suite("Policy files the fuzzer found")
struct PolicyFuzzRegressionTests {
    /// fuzz-policy crash-608f1a10: 2,409 nested flow mappings (`{{{{…`) overflowed the stack in
    /// Yams' recursive composer; a reload would have taken the relay down.
    static let deepFlowNesting = Data(base64Encoded: [
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3tCOgogICB7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7Qnt7e3t7e3t7e3t7e3t7e3t7e3tCOgog",
        "ICB7e3t7e3t7e3N7e3t7e3t7e3t7e3s0S0J7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0J7e3t7e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3tze3t7e3t7e3t7",
        "e3t7NEtCe3t7e3t7e3t7e3t7e0I6CiAgICFnbWE="
    ].joined())!

    @Test("collections nested thousands deep are a clean error, not a stack overflow")
    func deepFlowNestingIsRefused() {
        let yaml = String(decoding: Self.deepFlowNesting, as: UTF8.self)
        #expect(Self.deepFlowNesting.count == 2_477)
        #expect(throws: PolicyError.self) { try PolicyDocument(yaml: yaml) }
        do {
            _ = try PolicyDocument(yaml: yaml)
        } catch {
            #expect(error.description.contains("nested more than \(PolicyDocument.maxNesting) levels"))
        }
    }

    @Test("every way of nesting deeply is refused: flow sequences, block sequences on one line, indentation")
    func otherDeepNestingIsRefused() {
        let flow = String(repeating: "[", count: 100_000)
        let compact = String(repeating: "- ", count: 100_000) + "x"
        let indented = (0..<200).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + " v"
        for yaml in [flow, compact, indented] {
            #expect(throws: PolicyError.self) { try PolicyDocument(yaml: yaml) }
        }
    }

    @Test("nesting up to the limit is still read: the error is about the rules, not the depth")
    func nestingAtTheLimitIsRead() {
        let depth = PolicyDocument.maxNesting - 2  // the file's mapping and the rule list come first
        let yaml = "rules: [" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]"
        do {
            _ = try PolicyDocument(yaml: yaml)
            Issue.record("a list of lists is not a rule")
        } catch {
            #expect(!error.description.contains("nested"))
        }
    }
}
