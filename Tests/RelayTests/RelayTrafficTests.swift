import BLIPCore
import BLIPNIO
import NIOCore
import Testing
@testable import Relay

@Suite struct RelayTrafficTests {
    @Test func echoesUncompressedAndCompressed() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        #expect(client.subprotocol == "BLIP_3+CBMobile_4")
        for compressed in [false, true, false, true] {
            let text = String(repeating: "{\"_id\":\"doc\",\"v\":42}", count: 20)
            let reply = try await withTimeout {
                try await client.request(.request(profile: "echo", properties: ["docid": "d1"], body: body(text),
                                                  compressed: compressed))
            }
            #expect(reply.type == .response)
            #expect(reply.properties["docid"] == "d1")
            #expect(String(buffer: reply.body) == text)
        }
        // Inspection may wait a few milliseconds after forwarding (RelayLimits.inspectionDelay).
        _ = try await harness.recorder.first {
            if case .message(let event) = $0 { event.direction == .serverToClient && event.message.number == 4 } else { false }
        }
        let stats = await harness.relay.statistics()
        #expect(stats.first?.messagesDecoded == [4, 4])
        #expect(stats.first?.decodeErrors == [0, 0])
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.clientClose?.code == 1000)
        try await harness.shutdown()
    }

    @Test func multiFrameMessagesWithAckFlowControl() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        let big = String(repeating: "0123456789abcdef", count: 40_000)  // 640 kB: many frames, several ACKs
        let started = NIODeadline.now()
        for compressed in [false, true] {
            let reply = try await withTimeout {
                try await client.request(.request(profile: "big", body: body(big), compressed: compressed))
            }
            #expect(reply.body.readableBytes == big.utf8.count)
        }
        let ack = try await harness.recorder.first { if case .ack = $0 { true } else { false } }
        // Stamped with the time its read came in, as frames and messages are, not when inspected.
        guard case .ack(_, _, _, let time) = ack else { return }
        let read = try #require(time?.uptime)
        #expect(started <= read && read <= NIODeadline.now())
        try await client.close()
        try await harness.shutdown()
    }

    @Test func noReplyUrgentErrorsAndServerInitiatedRequests() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "note", noReply: true)) }
        let urgent = try await withTimeout { try await client.request(.request(profile: "u", urgent: true)) }
        #expect(urgent.flags.isUrgent)
        let error = try await withTimeout { try await client.request(.request(profile: "x", properties: ["Fail": "1"])) }
        #expect(error.type == .error)
        #expect(error.properties["Error-Code"] == "404")
        // The upstream asks the client something: the relay carries it the other way.
        let server = try await harness.upstream()
        _ = try await withTimeout {
            try await server.request(.request(profile: "getCheckpoint", properties: ["client": "c1"]))
        }.type
        let replyEvent = try await harness.recorder.first {
            if case .message(let event) = $0, event.direction == .clientToServer, event.requestProfile == "getCheckpoint" { true } else { false }
        }
        if case .message(let event) = replyEvent { #expect(event.roundTrip != nil) }
        try await client.close()
        try await harness.shutdown()
    }
}
