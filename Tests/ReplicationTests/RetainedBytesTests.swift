import BLIPCore
import NIOCore
import Testing
@testable import Replication

/// What keeping a typed message costs grows with what it holds, so a keeper can bound it.
@Suite("Retained bytes of a reading")
struct RetainedBytesTests {
    func typed(_ profile: String, _ properties: [String: String] = [:], body: String) -> ReplicationMessage {
        ReplicationMessage(.request(profile: profile, properties: Properties(properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
                                    body: ByteBuffer(string: body)))
    }

    @Test("a checkpoint body is counted node by node: at least its text, more than an empty one")
    func checkpointBodies() {
        let members = (0..<1_000).map { "\"key-that-is-long-enough-\($0)\":\"value-that-is-long-enough-\($0)\"" }
        let body = "{" + members.joined(separator: ",") + "}"
        let big = typed("setCheckpoint", ["client": "c"], body: body).retainedBytes
        let small = typed("setCheckpoint", ["client": "c"], body: "{}").retainedBytes
        #expect(big >= body.utf8.count && big > small + 50_000)
    }

    @Test("a changes batch grows with its entries; a generic message holds nothing but itself")
    func changesBatches() {
        func batch(_ count: Int) -> Int {
            typed("changes", body: "[" + (0..<count).map { "[\($0),\"doc-with-a-long-id-\($0)\",\"1-0123456789abcdef0123\"]" }
                .joined(separator: ",") + "]").retainedBytes
        }
        #expect(batch(1_000) > 10 * batch(10))
        #expect(batch(1_000) > 1_000 * 2 * 32, "two out-of-line strings per entry")
        #expect(typed("echo", body: String(repeating: "x", count: 10_000)).retainedBytes < 1_000)
    }
}
