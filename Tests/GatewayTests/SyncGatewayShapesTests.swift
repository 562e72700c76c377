import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Gateway

/// The embedded gateway pulls as Sync Gateway does (docs/sync-gateway-behaviour.md), told by a
/// hand-driven client: the caught-up changes has the body `null`, a rev without attachments comes
/// NoReply, a rev with one awaits its reply, and its attachment may be fetched only until then.
@Suite("Gateway: Sync Gateway's shapes")
struct SyncGatewayShapesTests {
    static let note = Array("hello".utf8)

    @Test func revsAreNoReplyUnlessTheyHaveAttachmentsWhichMayBeFetchedOnlyUntilTheRevIsAnswered() async throws {
        try await withGateway(seed: { database in
            try database.put("plain", body: ["v": .number("1")])
            try database.put("withblob", body: ["v": .number("2")],
                             attachments: ["note.txt": Attachment(contentType: "text/plain", data: Self.note)])
        }) { gateway in
            let requests = AsyncStream<BLIPMessage>.makeStream()
            let continuation = requests.continuation
            var client = BLIPWebSocketClient.Configuration()
            client.port = gateway.server.port
            client.path = "/db/_blipsync"
            client.subprotocols = ["BLIP_3+CBMobile_3"]
            client.onRequest = { request, handler in
                // A changes batch is wanted whole at once; everything else goes to the test.
                if request.profile == "changes", !request.isNoReply {
                    let count = String(buffer: request.body).components(separatedBy: "],[").count
                    let wanted = Array(repeating: "[]", count: count).joined(separator: ",")
                    handler.sendReply(.reply(to: request, body: ByteBuffer(string: "[\(wanted)]")))
                }
                continuation.yield(request)
            }
            guard case .connected(let connection) = try await BLIPWebSocketClient.connect(client, group: gateway.group) else {
                Issue.record("not connected")
                return
            }
            #expect(try await connection.request(.request(profile: "subChanges")).type == .response)
            var iterator = requests.stream.makeAsyncIterator()
            var revs: [String: BLIPMessage] = [:]
            var caughtUp: BLIPMessage?
            while revs.count < 2 || caughtUp == nil, let request = await iterator.next() {
                if request.profile == "changes", String(buffer: request.body) == "null" { caughtUp = request }
                if request.profile == "rev" { revs[request.properties["id"] ?? "?"] = request }
            }
            #expect(caughtUp?.isNoReply == true, "the caught-up changes: body null, NoReply")
            let plain = try #require(revs["plain"])
            let withBlob = try #require(revs["withblob"])
            #expect(plain.isNoReply && !withBlob.isNoReply)

            let digest = GatewayDatabase.attachmentDigest(of: Self.note)
            let get = BLIPMessage.request(profile: "getAttachment", properties: ["digest": digest, "docID": "withblob"])
            let fetched = try await connection.request(get)
            #expect(fetched.type == .response && Array(fetched.body.readableBytesView) == Self.note, "allowed while the rev awaits its reply")
            try await connection.onLoop { $0.sendReply(.reply(to: withBlob)) }
            // The reply withdraws the allowance: a later fetch is Sync Gateway's 403.
            let late = try await connection.request(get)
            #expect(late.type == .error && late.properties["Error-Code"] == "403")
            #expect(String(buffer: late.body) == "Attachment's doc not being synced")
            let other = try await connection.request(.request(profile: "getAttachment", properties: ["digest": digest, "docID": "plain"]))
            #expect(other.type == .error && other.properties["Error-Code"] == "403", "allowed for its own document only")
            try await connection.close()
        }
    }
}
