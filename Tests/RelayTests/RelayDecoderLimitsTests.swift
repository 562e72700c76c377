import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Mediation
import NIOCore
import NIOWebSocket
import Testing
import WebSocketWire
import WebView
@testable import Relay

/// The decoding side's memory limits (``RelayLimits/maxWebSocketMessageSize``,
/// ``RelayLimits/maxDecoderBytesInProgress``) crossed through real sockets: what the relay
/// forwards, what it reports, and when it closes.
@Suite struct RelayDecoderLimitsTests {
    /// One BLIP frame (a no-reply request of `size` random body bytes, number 1 of a fresh
    /// client) as a client's WebSocket message in fragments of at most `fragment` bytes.
    static func fragmentedRequest(bodySize size: Int, fragment: Int) throws -> (frame: [UInt8], wire: ByteBuffer) {
        var random = SeededRandom(seed: 5)
        let endpoint = BLIPEndpoint()
        _ = endpoint.send(request: .request(profile: "oversize", body: ByteBuffer(bytes: random.bytes(size)), noReply: true))
        let frame = try #require(try endpoint.nextFrame()).bytes
        let bytes = Array(frame.readableBytesView)
        #expect(try endpoint.nextFrame() == nil, "the whole message is one BLIP frame")
        var wire = ByteBuffer()
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + fragment)
            var part = WebSocketFrameWriter.frame(opcode: offset == 0 ? 0x2 : 0x0, payload: ByteBuffer(bytes: bytes[offset..<end]),
                                                  mask: .random())
            if end < bytes.count { part.setInteger(part.getInteger(at: 0, as: UInt8.self)! & 0x7F, at: 0) }  // FIN off
            wire.writeBuffer(&part)
            offset = end
        }
        return (bytes, wire)
    }

    /// An upstream that records the requests it receives.
    static func recordingUpstream(_ received: EventLog<BLIPMessage>) -> (inout BLIPWebSocketServer.Configuration) -> Void {
        { configuration in
            configuration.onRequest = { request, handler in
                received.append(request)
                RelayHarness.echo(request, handler)
            }
        }
    }

    @Test func aFragmentedMessageOverTheReassemblyLimitIsForwardedWholeAndReportedAsADecodeError() async throws {
        let received = EventLog<BLIPMessage>()
        let harness = try await RelayHarness.start(upstream: Self.recordingUpstream(received),
                                                   relay: { $0.limits.maxWebSocketMessageSize = 1024 })
        let client = try await harness.connected()
        let (frame, wire) = try Self.fragmentedRequest(bodySize: 3000, fragment: 700)
        #expect(frame.count > 1024 && wire.readableBytes > 1024)
        try await RelayRawForwardingTests.writeRaw(wire, on: client)

        let forwarded = try await received.first(within: 10) { _, message in message.profile == "oversize" }
        #expect(forwarded.body.readableBytes == 3000, "forwarding does not depend on the limit")
        let error = try await harness.recorder.first(within: 10) {
            if case .decodeError(_, .clientToServer, let error) = $0 { error } else { nil }
        }
        #expect(error.code == "decode_failed")
        #expect(error.description.contains("over the reassembly limit"), "\(error)")
        #expect(!harness.recorder.all.contains {
            if case .message(let event) = $0 { event.message.profile == "oversize" } else { false }
        }, "the message was not decoded")

        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil, "without --strict the session is not closed for it")
        #expect(summary.clientClose?.code == 1000)
        #expect(summary.statistics.decodeErrors[0] >= 1)
        #expect(summary.statistics.framesForwarded[0] >= 5, "every fragment forwarded")
        try await harness.shutdown()
    }

    @Test(arguments: ["strict", "mediating"])
    func aMessageOverTheReassemblyLimitClosesAStrictOrMediatingSessionWith1011(mode: String) async throws {
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.limits.maxWebSocketMessageSize = 1024
            if mode == "strict" { configuration.strict = true }
            if mode == "mediating" { configuration.mediationPolicy = { _ in ClosurePolicy { _ in .pass } } }
        })
        let client = try await harness.connected()
        let server = try await harness.upstream()
        try await RelayRawForwardingTests.writeRaw(try Self.fragmentedRequest(bodySize: 3000, fragment: 700).wire, on: client)
        #expect(try await withTimeout { try await client.closed.get() }.code == 1011)
        #expect(try await withTimeout { try await server.closed.get() }.code == 1011)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "decode_failed")
        #expect(summary.relayError?.description.contains("over the reassembly limit") == true)
        try await harness.shutdown()
    }

    @Test func pastTheDecoderBudgetTheSessionStopsDecodingAndForwardingGoesOn() async throws {
        let harness = try await RelayHarness.start(relay: { $0.limits.maxDecoderBytesInProgress = 20_000 })
        let client = try await harness.connected()
        let before = try await withTimeout { try await client.request(.request(profile: "before", body: body("small"))) }
        #expect(String(buffer: before.body) == "small")
        // 100 kB in 16 KiB frames: after the second frame more than 20 kB wait for the rest.
        let bulk = ByteBuffer(repeating: 0x61, count: 100_000)
        let reply = try await withTimeout { try await client.request(.request(profile: "bulk", body: bulk)) }
        #expect(reply.body == bulk, "forwarding goes on past the budget")
        let after = try await withTimeout { try await client.request(.request(profile: "after", body: body("still"))) }
        #expect(String(buffer: after.body) == "still")

        let error = try await harness.recorder.first { if case .decodeError(_, _, let error) = $0 { error } else { nil } }
        #expect(error.code == "decoder_budget_exceeded")
        #expect(error.description == "partly received messages exceed the decoder budget of 20000 bytes")
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        #expect(summary.statistics.decoding == false)
        let decoded = harness.recorder.all.compactMap { event -> String? in
            if case .message(let message) = event, message.direction == .clientToServer { message.message.profile } else { nil }
        }
        #expect(decoded == ["before"], "messages decoded before the budget was crossed, none after")
        try await harness.shutdown()
    }

    @Test func bodiesNobodyReadsAreCountedNotHeldSoTheyStayWithinTheDecoderBudget() async throws {
        // No observer reads bodies: the analyzer reads changes, not an unknown profile's 100 kB.
        let harness = try await RelayHarness.start(relay: { $0.limits.maxDecoderBytesInProgress = 20_000 },
                                                   recording: [.sessions, .messages, .analysis])
        let client = try await harness.connected()
        let bulk = ByteBuffer(repeating: 0x61, count: 100_000)
        let reply = try await withTimeout { try await client.request(.request(profile: "bulk", body: bulk, compressed: true)) }
        #expect(reply.body == bulk, "forwarded whole")
        let feed = "[" + (1...760).map { "[\($0),\"doc-\($0)\",\"1-abc\"]" }.joined(separator: ",") + "]"
        #expect(feed.utf8.count > 16_384 && feed.utf8.count < 20_000, "two frames, within the budget when held")
        let changes = try await withTimeout { try await client.request(.request(profile: "changes", body: body(feed))) }
        #expect(String(buffer: changes.body) == feed)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.statistics.decoding == true, "the 100 kB were never held: the budget was not crossed")
        let messages = harness.recorder.all.compactMap { event -> MessageEvent? in
            if case .message(let message) = event { message } else { nil }
        }
        let bulkMessages = messages.filter { ($0.requestProfile ?? $0.message.profile) == "bulk" }
        #expect(bulkMessages.count == 2)
        for event in bulkMessages {
            #expect(event.message.body.readableBytes == 0)
            #expect(event.message.bodyLength == 100_000)
            #expect(event.message.frameCount > 1)
        }
        let read = messages.filter { $0.message.type == .request && $0.message.profile == "changes" }
        #expect(read.count == 1)
        #expect(read.first.map { String(buffer: $0.message.body) } == feed, "the analyzer reads changes: kept")
        #expect(read.first?.message.frameCount == 2)
        try await harness.shutdown()
    }

    /// Passing through, or mediating with a policy that lets everything pass.
    @Test(arguments: [false, true])
    func theWebViewKeepsItsPreviewOfABodyNobodyElseReads(mediating: Bool) async throws {
        var limits = WebViewLimits.default
        limits.bodyPreviewBytes = 100
        let history = SessionHistory(limits: limits)
        let harness = try await RelayHarness.start(relay: { configuration in
            if mediating { configuration.mediationPolicy = { _ in ClosurePolicy { _ in .pass } } }
        }, observers: [HistoryObserver(history: history)], recording: [.sessions, .messages, .analysis])
        let client = try await harness.connected()
        let bulk = ByteBuffer(string: (0..<10_000).map { "row \($0);" }.joined())
        let reply = try await withTimeout { try await client.request(.request(profile: "bulk", body: bulk, compressed: true)) }
        #expect(reply.body == bulk)
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let request = try #require(harness.recorder.all.lazy.compactMap { event -> BLIPMessage? in
            if case .message(let message) = event, message.message.type == .request { message.message } else { nil }
        }.first)
        #expect(request.body == bulk.getSlice(at: 0, length: 100), "the preview, and only it, is kept")
        #expect(request.bodyLength == bulk.readableBytes)
        let recording = try #require(history.recordings().first)
        let records = recording.records(from: 0, limit: 10)
        #expect(records.count == 2)
        for record in records {
            #expect(record.bodyBytes == bulk.readableBytes)
            #expect(record.bodyPreview == Array(bulk.readableBytesView.prefix(100)))
        }
    }

    @Test func pastTheDecoderBudgetAStrictSessionIsClosedWith1011() async throws {
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.limits.maxDecoderBytesInProgress = 20_000
            configuration.strict = true
        })
        let client = try await harness.connected()
        let server = try await harness.upstream()
        // Never answered: the session is closed while the request is still being forwarded.
        let pending = try await client.onLoop { handler in
            handler.sendRequest(.request(profile: "bulk", body: ByteBuffer(repeating: 0x61, count: 100_000)))
        }
        #expect(try await withTimeout { try await client.closed.get() }.code == 1011)
        #expect(try await withTimeout { try await server.closed.get() }.code == 1011)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "decoder_budget_exceeded")
        _ = pending
        try await harness.shutdown()
    }
}
