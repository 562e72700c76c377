import BLIPTestSupport
import Capture
import Foundation
import Testing

/// `blipscope sniff` as a user runs it: the built executable decodes, live on loopback, a
/// replication between the built gateway and the built replicator. Needs capture permission
/// (root, or CAP_NET_RAW); skipped otherwise.
@Suite("blipscope sniff, end to end")
struct SniffCommandTests {
    @Test("sniff --interface lo --port P decodes every message of a pull as it happens",
          .enabled(if: LiveSniffTests.canCapture, "cannot capture on lo (needs root or CAP_NET_RAW)"))
    func liveReplication() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: BlipscopeExecutable.sampleDocumentsPath))
        let docs = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["docs"] as? [[String: Any]])
        let ids = Set(docs.compactMap { $0["_id"] as? String })
        let (gateway, port) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath])
        defer { gateway.kill() }
        // --duration bounds the sniffer even if this test stops waiting for it.
        let sniff = try BlipscopeExecutable.start(["sniff", "--interface", "lo", "--port", "\(port)", "--json", "--duration", "60"])
        defer { sniff.kill() }
        try await sniff.waitForError(containing: "capturing on lo (tcp port \(port))")

        let pull = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(port)/db")
        #expect(pull.status == 0, "\(pull.errors)")
        #expect(pull.result?["pulledRevisions"] as? Int == ids.count)
        // Both CLOSEs end the conversation: everything before them has been decoded by then.
        try await sniff.waitForOutput { $0.components(separatedBy: #""type":"CLOSE""#).count - 1 >= 2 }
        #expect(try await sniff.stop() == 0)

        let records = try sniff.output.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(records.allSatisfy { $0["error"] == nil }, "no decoding errors")
        let revs = records.filter {
            $0["type"] as? String == "MSG" && ($0["properties"] as? [String: String])?["Profile"] == "rev"
        }
        #expect(Set(revs.compactMap { ($0["properties"] as? [String: String])?["id"] }) == ids)
        #expect(revs.allSatisfy { $0["from"] as? String == "server" })
        // As from Sync Gateway: a rev awaits its reply only when it has attachments.
        let awaited = revs.filter { $0["noReply"] as? Bool == false }
        let revNumbers = Set(awaited.compactMap { $0["number"] as? Int })
        let revReplies = records.filter {
            $0["type"] as? String == "RPY" && $0["from"] as? String == "client" && revNumbers.contains($0["number"] as? Int ?? -1)
        }
        #expect(!awaited.isEmpty && awaited.count < revs.count, "NoReply revs and revs with attachments")
        #expect(revReplies.count == awaited.count, "every rev awaiting a reply was answered by the replicator")
        let profiles = Set(records.compactMap { ($0["properties"] as? [String: String])?["Profile"] })
        #expect(profiles.isSuperset(of: ["getCheckpoint", "subChanges", "changes", "rev", "getAttachment"]), "\(profiles)")
        #expect(records.filter { $0["type"] as? String == "CLOSE" }.map { $0["code"] as? Int } == [1000, 1000])
        #expect(try await gateway.stop() == 0)
    }
}
