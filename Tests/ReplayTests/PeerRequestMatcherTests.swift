import BLIPCore
import NIOCore
import Replay
import Testing

/// Which recorded request a live peer request stands for.
@Suite struct PeerRequestMatcherTests {
    static func recorded(_ requests: [BLIPMessage]) -> [RecordedPeerRequest] {
        requests.enumerated().map { index, request in
            var request = request
            request.number = MessageNumber(index + 1)
            return RecordedPeerRequest(index: index, request: request, receivedAt: Double(index),
                                       recordedReply: .reply(to: request, body: ByteBuffer(string: "reply \(index)")))
        }
    }

    @Test func revisionsPairByDocumentAndRevisionWhateverTheOrder() throws {
        var matcher = PeerRequestMatcher(peerRequests: Self.recorded([
            .request(profile: "rev", properties: ["id": "a", "rev": "1-a"], body: ByteBuffer(string: "{}")),
            .request(profile: "rev", properties: ["id": "b", "rev": "1-b"], body: ByteBuffer(string: "{}")),
        ]))
        let secondMatch = matcher.match(.request(profile: "rev", properties: ["rev": "1-b", "id": "b"],
                                                 body: ByteBuffer(string: "{}")))
        let second = try #require(secondMatch)
        #expect(second.recorded.index == 1 && second.exact && !second.reused)
        let firstMatch = matcher.match(.request(profile: "rev", properties: ["id": "a", "rev": "1-a"]))
        let first = try #require(firstMatch)
        #expect(first.recorded.index == 0 && !first.exact)
        let extraMatch = matcher.match(.request(profile: "rev", properties: ["id": "c", "rev": "1-c"]))
        let extra = try #require(extraMatch)
        #expect(extra.reused && extra.recorded.index == 1)
        #expect(matcher.match(.request(profile: "getRev")) == nil)
    }

    @Test func batchesWithOtherContentPairByPosition() throws {
        var matcher = PeerRequestMatcher(peerRequests: Self.recorded([
            .request(profile: "changes", body: ByteBuffer(string: "[[1,\"a\",\"1-a\"]]")),
            .request(profile: "changes", body: ByteBuffer(string: "[]")),
        ]))
        // The empty caught-up batch is recognised by content even when it comes first.
        let caughtUp = matcher.match(.request(profile: "changes", body: ByteBuffer(string: "[]")))
        #expect(caughtUp?.recorded.index == 1)
        let batch = matcher.match(.request(profile: "changes", body: ByteBuffer(string: "[[9,\"z\",\"1-z\"]]")))
        #expect(batch?.recorded.index == 0)
    }

    @Test func theReplyCarriesTheNewNumberAndTheRecordedContent() {
        var recorded = BLIPMessage.error(to: 3, domain: "HTTP", code: 404, message: "missing", urgent: true)
        recorded.flags.hasMoreComing = true
        var live = BLIPMessage.request(profile: "getCheckpoint")
        live.number = 11
        let reply = PeerRequestMatcher.reply(recorded, answering: live)
        #expect(reply.number == 11 && reply.type == .error)
        #expect(reply.flags.isUrgent && !reply.flags.hasMoreComing)
        #expect(reply.properties["Error-Code"] == "404" && String(buffer: reply.body) == "missing")
    }
}
