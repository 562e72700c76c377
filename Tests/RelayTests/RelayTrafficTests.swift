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
        // Stamped with the time its read came in, as frames and messages are, not when inspected.
        let time = try await harness.recorder.first { event -> ReceiptTime?? in
            if case .ack(_, _, _, let time) = event { time } else { nil }
        }
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

/// Both hops read with buffers of ``RelayLimits/readBufferMinimum`` bytes at least, growing to
/// ``RelayLimits/readBufferMaximum``: a run of small messages then comes in one socket read, not a
/// full small buffer followed by another read.
@Suite struct RelayReadBufferTests {
    @Test func bothHopsReadWithTheConfiguredBuffers() async throws {
        let harness = try await RelayHarness.start(relay: {
            $0.limits.readBufferMinimum = 8 * 1024
            $0.limits.readBufferMaximum = 32 * 1024
        })
        let client = try await harness.connected()
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("hello"))) }
        #expect(String(buffer: reply.body) == "hello")
        let sessions = await harness.relay.readAllocators()
        #expect(sessions.count == 1)
        let hops = try #require(sessions.first)
        #expect(hops.count == 2)
        for (side, allocator) in zip(["client", "upstream"], hops) {
            let allocator = try #require(allocator, "the \(side) hop reads with an adaptive allocator")
            #expect(allocator.minimum == 8 * 1024, "the \(side) hop's smallest read")
            #expect(allocator.initial == 8 * 1024, "the \(side) hop's first read")
            #expect(allocator.maximum == 32 * 1024, "the \(side) hop's largest read")
        }
        try await client.close()
        try await harness.shutdown()
    }

    @Test func theDefaultsReadFromTwoKiBToSixtyFour() {
        let allocator = RelayLimits().readAllocator
        #expect(allocator.minimum == 2 * 1024)
        #expect(allocator.initial == 2 * 1024)
        #expect(allocator.maximum == 64 * 1024)
        // A minimum past the maximum wins: reads never get smaller than asked.
        var limits = RelayLimits()
        limits.readBufferMinimum = 128 * 1024
        #expect(limits.readAllocator.maximum == 128 * 1024)
        #expect(limits.readAllocator.initial == 128 * 1024)
        // Under 64 bytes, 64.
        limits = RelayLimits()
        limits.readBufferMinimum = 0
        #expect(limits.readAllocator.minimum == 64)
    }
}

/// A client's small masked messages are unmasked for decoding into one buffer the session keeps
/// (``RelayLimits/unmaskBufferKept``). Here an observer holds every message it is shown, so that
/// buffer is still in use when the next message comes: each must still be decoded from its own
/// bytes, and every held one stay as it was read.
@Suite struct RelayUnmaskBufferTests {
    @Test func heldClientMessagesKeepTheirOwnBytes() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        let texts = (0..<24).map { index in
            "request \(index) " + String(repeating: String(UnicodeScalar(UInt8(65 + index))), count: 60 + 7 * index)
        }
        try await withTimeout {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for text in texts {
                    group.addTask {
                        let reply = try await client.request(.request(profile: "echo", body: body(text)))
                        #expect(String(buffer: reply.body) == text)
                    }
                }
                try await group.waitForAll()
            }
        }
        // Inspection may wait a few milliseconds after forwarding (RelayLimits.inspectionDelay).
        _ = try await harness.recorder.first {
            if case .message(let event) = $0 { event.direction == .serverToClient && event.message.number == 24 } else { false }
        }
        let requests = harness.recorder.all.compactMap { event -> MessageEvent? in
            if case .message(let message) = event, message.direction == .clientToServer { message } else { nil }
        }
        #expect(requests.count == texts.count)
        #expect(Set(requests.map { String(buffer: $0.message.body) }) == Set(texts))
        try await client.close()
        try await harness.shutdown()
    }
}
