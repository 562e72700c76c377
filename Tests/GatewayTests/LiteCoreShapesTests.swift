import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import NIOCore
import Replication
import Testing

/// The embedded gateway answers what LiteCore 3.1 sends the way Sync Gateway does
/// (docs/litecore-behaviour.md): properties that are present but empty, LiteCore's `1` for true,
/// `conflictIncludesRev`, the empty "nothing to push" proposeChanges.
@Suite struct LiteCoreShapesTests {
    static let revA = "1-" + String(repeating: "a", count: 40)
    static let revB = "2-" + String(repeating: "b", count: 40)

    private func send(_ connection: BLIPConnection, _ profile: String, _ properties: Properties = [:],
                      body: String = "", noReply: Bool = false) async throws -> BLIPMessage {
        try await connection.request(.request(profile: profile, properties: properties, body: ByteBuffer(string: body),
                                              noReply: noReply))
    }

    @Test func liteCoresFirstCheckpointSaveHasAnEmptyRevAndIsANewCheckpoint() async throws {
        try await withGateway { gateway in
            let connection = try #require(try await gateway.dial().connection)
            let missing = try await send(connection, "getCheckpoint", ["client": "cp-1"])
            #expect(missing.type == .error && missing.properties["Error-Domain"] == "HTTP"
                    && missing.properties["Error-Code"] == "404")
            let first = try await send(connection, "setCheckpoint", ["client": "cp-1", "rev": ""], body: #"{"local":7}"#)
            #expect(first.type == .response && first.properties["rev"] == "0-1")
            let second = try await send(connection, "setCheckpoint", ["client": "cp-1", "rev": "0-1"], body: #"{"local":9}"#)
            #expect(second.properties["rev"] == "0-2")
            // An empty rev for a checkpoint that exists is a conflict; LiteCore then re-reads it.
            let stale = try await send(connection, "setCheckpoint", ["client": "cp-1", "rev": ""], body: "{}")
            #expect(stale.properties["Error-Code"] == "409")
            // A rev for a checkpoint the gateway does not hold is 404, as Sync Gateway answers.
            let unknown = try await send(connection, "setCheckpoint", ["client": "cp-2", "rev": "0-5"], body: "{}")
            #expect(unknown.properties["Error-Code"] == "404")
            try await connection.close()
        }
    }

    @Test func aConflictIncludesTheServersRevWhenAskedAndLiteCoresEmptyProposalGetsNoReply() async throws {
        try await withGateway(seed: { try $0.put("doc", body: ["v": .number("1")]) }) { gateway in
            let current = try #require(gateway.database.document("doc")?.currentRevID)
            let connection = try #require(try await gateway.dial().connection)
            let body = #"[["new","\#(Self.revA)"],["doc","\#(Self.revB)","1-\#(String(repeating: "c", count: 40))"]]"#
            let withRev = try await send(connection, "proposeChanges", ["conflictIncludesRev": "true"], body: body)
            #expect(String(buffer: withRev.body) == #"[0,{"rev":"\#(current)","status":409}]"#
                    || String(buffer: withRev.body) == #"[0,{"status":409,"rev":"\#(current)"}]"#)
            let plain = try await send(connection, "proposeChanges", body: body)
            #expect(String(buffer: plain.body) == "[0,409]")
            // LiteCore sends `[]` as NoReply when it has nothing to push: no answer, nothing breaks.
            _ = try await send(connection, "proposeChanges", body: "[]", noReply: true)
            let after = try await send(connection, "getRev", ["id": "doc"])
            #expect(after.type == .response)
            try await connection.close()
        }
    }

    @Test func liteCoresRevWithOneForTrueAndSequenceAsJSONIsStored() async throws {
        try await withGateway { gateway in
            let connection = try #require(try await gateway.dial().connection)
            let reply = try await send(connection, "rev", ["id": "d1", "rev": Self.revA, "sequence": "12",
                                                           "noconflicts": "1", "deleted": "1"], body: "{}")
            #expect(reply.type == .response)
            #expect(gateway.database.document("d1")?.isDeleted == true)
            try await connection.close()
        }
    }
}
