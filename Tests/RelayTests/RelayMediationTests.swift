import BLIPCore
import BLIPNIO
import Logging
import Mediation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Prometheus
import Testing
import WebSocketWire
@testable import Relay

/// A mediation policy driven by a closure: the test double the relay's policy factory hands out.
final class ClosurePolicy: MediationPolicy, @unchecked Sendable {
    let onHead: @Sendable (MediatedHead) -> HeadDecision

    init(_ onHead: @escaping @Sendable (MediatedHead) -> HeadDecision) { self.onHead = onHead }

    func decide(head: MediatedHead) -> HeadDecision { onHead(head) }
    func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision { .pass }
}

/// The relay's mediating mode through real sockets: a BLIPNIO client, the relay with a policy,
/// a BLIPNIO server. Real peers check every number, checksum and deflated byte (wire-format §2.4,
/// §3, §4.4) and would close on the first wrong one.
@Suite struct RelayMediationTests {
    @Test("deny the client's MSG #5: ERR #5 to the client, its #6 reaches upstream as #5, and the session goes on")
    func denyFifthRequest() async throws {
        let seen = NIOLockedValueBox<[(number: MessageNumber, seq: String)]>([])
        let harness = try await RelayHarness.start(upstream: { configuration in
            configuration.onRequest = { request, handler in
                seen.withLockedValue { $0.append((request.number, request.properties["seq"] ?? "")) }
                RelayHarness.echo(request, handler)
            }
        }, relay: { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    head.direction == .clientToServer && head.type == .request
                        && ["5", "deny-me"].contains(head.properties["seq"] ?? "")
                        ? .deny(ErrorReply(code: 403, message: "not for you"), rule: "no-five") : .pass
                }
            }
        })
        let client = try await harness.connected()
        let bulk = String(repeating: "{\"_id\":\"doc\",\"n\":12345},", count: 6_000)
        var replies: [BLIPMessage] = []
        for seq in 1...8 {
            let request = BLIPMessage.request(profile: seq == 7 ? "bulk" : "echo", properties: ["seq": String(seq)],
                                              body: body(seq == 7 ? bulk : "body \(seq)"), compressed: seq % 2 == 0)
            replies.append(try await withTimeout { try await client.request(request) })
        }
        #expect(replies[4].type == .error)
        #expect(replies[4].properties["Error-Domain"] == "HTTP" && replies[4].properties["Error-Code"] == "403")
        #expect(String(buffer: replies[4].body) == "not for you")
        for (index, reply) in replies.enumerated() where index != 4 {
            #expect(reply.type == .response && reply.properties["seq"] == String(index + 1))
        }
        #expect(String(buffer: replies[6].body) == bulk)
        let upstreamSaw = seen.withLockedValue { $0 }.prefix(7)
        #expect(upstreamSaw.map(\.number) == [1, 2, 3, 4, 5, 6, 7])
        #expect(upstreamSaw.map(\.seq) == ["1", "2", "3", "4", "6", "7", "8"])

        // The other direction, re-encoded since the injected ERR, still works both ways.
        let server = try await harness.upstream()
        let answer = try await withTimeout {
            try await server.request(.request(profile: "changes", body: body("[]"), compressed: true))
        }
        #expect(answer.type == .response && String(buffer: answer.body) == "[]")

        // A denied compressed multi-frame request in the middle of compressed traffic: the relay
        // re-deflates what follows, and the upstream still inflates and verifies every frame.
        let denied = try await client.send(.request(profile: "bulk", properties: ["seq": "deny-me"], body: body(bulk),
                                                    compressed: true))
        let after = try await client.send(.request(profile: "bulk", properties: ["seq": "9"], body: body(bulk + "!"),
                                                   compressed: true))
        let (deniedReply, afterReply) = try await withTimeout { (try await denied.get(), try await after.get()) }
        #expect(deniedReply.type == .error && afterReply.type == .response)
        #expect(String(buffer: afterReply.body) == bulk + "!" && afterReply.properties["seq"] == "9")
        #expect(seen.withLockedValue { $0.map(\.number) }.last == 8)

        let event = try await harness.recorder.first { if case .verdict(let event) = $0 { event } else { nil } }
        #expect(event.number == 5 && event.rule == "no-five" && event.action == "deny 403" && event.profile == "echo")
        #expect(!harness.recorder.all.contains { if case .sessionClosed = $0 { true } else { false } })
        let replyEvents = harness.recorder.all.compactMap { event -> MessageEvent? in
            if case .message(let message) = event, message.direction == .serverToClient, message.message.type == .response {
                return message
            }
            return nil
        }
        // Observers see replies in the client's numbering, paired with the requests' profiles.
        #expect(replyEvents.map(\.message.number).prefix(7) == [1, 2, 3, 4, 6, 7, 8])
        #expect(replyEvents.allSatisfy { $0.requestProfile != nil })

        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        try await harness.shutdown()
    }

    @Test("a client that starts large compressed requests and finishes none is cut off at the mediating session's bound")
    func unfinishedMessagesAreBounded() async throws {
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.mediationPolicy = { _ in ClosurePolicy { _ in .pass } }
            configuration.limits.decoder.maxBytesInProgress = 8 << 20
        })
        let client = try await harness.connected()
        let other = try await harness.connected()
        // Frames of our own: first frames only, each inflating to 2 MiB of zeros (a few KB on the wire).
        let codec = OutboundCodec()
        var burst = ByteBuffer()
        for number in 1...8 {
            var frame = ByteBuffer()
            try codec.encodeFrame(number: MessageNumber(number),
                                  flags: FrameFlags(type: .request, compressed: true, moreComing: true),
                                  chunk: ByteBuffer(repeating: 0, count: 2 << 20), into: &frame)
            var bytes = RelayRawForwardingTests.clientFrame(.binary, frame)
            burst.writeBuffer(&bytes)
        }
        #expect(burst.readableBytes < 200_000)
        try await RelayRawForwardingTests.writeRaw(burst, on: client)
        let close = try await withTimeout { try await client.closed.get() }
        #expect(close.code == 1011)
        #expect(close.reason.contains("tooMuchInProgress"))
        // Only that session ended: the other still round-trips.
        let reply = try await withTimeout { try await other.request(.request(profile: "echo", body: body("still here"))) }
        #expect(String(buffer: reply.body) == "still here")
        try await other.close()
        try await harness.shutdown()
    }

    @Test("the relay-wide bound on partly received messages ends the session that crosses it, not the others")
    func relayWideInProgressBound() async throws {
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.mediationPolicy = { _ in ClosurePolicy { _ in .pass } }
            configuration.limits.maxRelayBytesInProgress = 3 << 20
        })
        func firstFrame(of size: Int) throws -> ByteBuffer {
            var frame = ByteBuffer()
            try OutboundCodec().encodeFrame(number: 1, flags: FrameFlags(type: .request, compressed: true, moreComing: true),
                                            chunk: ByteBuffer(repeating: 0, count: size), into: &frame)
            return RelayRawForwardingTests.clientFrame(.binary, frame)
        }
        let first = try await harness.connected()
        try await RelayRawForwardingTests.writeRaw(try firstFrame(of: 2 << 20), on: first)
        // The relay has charged the first session's 2 MiB once it has read that frame's head.
        _ = try await harness.recorder.first { if case .messageHead = $0 { true } else { false } }
        let second = try await harness.connected()
        try await RelayRawForwardingTests.writeRaw(try firstFrame(of: 2 << 20), on: second)
        let close = try await withTimeout { try await second.closed.get() }
        #expect(close.code == 1011 && close.reason.contains("tooMuchInProgress"), "\(close)")
        #expect(first.channel.isActive, "the session within the bound goes on")
        try await first.close()
        try await harness.shutdown()
    }

    @Test("a mediating session holds no body that neither its policy nor its analyzer reads, forwarded or re-encoded")
    func unreadBodiesAreNotHeld() async throws {
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in head.profile == "deny-me" ? .deny(ErrorReply(code: 403, message: "no"), rule: "no") : .pass }
            }
            // Far below one bulk message: holding one whole would end the session with 1011.
            configuration.limits.maxRelayBytesInProgress = 50_000
        }, recording: [.sessions, .messages, .analysis])
        let client = try await harness.connected()
        let bulk = ByteBuffer(string: (0..<20_000).map { "row \($0);" }.joined())
        #expect(bulk.readableBytes > 150_000)
        // First as the client's direction is forwarded byte for byte, then after a denial has
        // switched it to re-encoding (renumbered, re-deflated).
        let first = try await withTimeout { try await client.request(.request(profile: "bulk", body: bulk, compressed: true)) }
        #expect(first.body == bulk)
        let denied = try await withTimeout { try await client.request(.request(profile: "deny-me", body: body("x"))) }
        #expect(denied.type == .error)
        let second = try await withTimeout { try await client.request(.request(profile: "bulk", body: bulk, compressed: true)) }
        #expect(second.body == bulk)
        // The analyzer reads changes: a two-frame list is still kept whole.
        let feed = "[" + (1...760).map { "[\($0),\"doc-\($0)\",\"1-abc\"]" }.joined(separator: ",") + "]"
        let changes = try await withTimeout { try await client.request(.request(profile: "changes", body: body(feed))) }
        #expect(String(buffer: changes.body) == feed)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil, "never over the relay-wide bound")

        let messages = harness.recorder.all.compactMap { event -> MessageEvent? in
            if case .message(let message) = event { message } else { nil }
        }
        let bulkMessages = messages.filter { ($0.requestProfile ?? $0.message.profile) == "bulk" }
        #expect(bulkMessages.count == 4, "two requests, two replies")
        for event in bulkMessages {
            #expect(event.message.body.readableBytes == 0)
            #expect(event.message.bodyLength == bulk.readableBytes)
        }
        let read = messages.filter { $0.message.type == .request && $0.message.profile == "changes" }
        #expect(read.map { String(buffer: $0.message.body) } == [feed])
        #expect(read.first?.message.frameCount == 2)
        try await harness.shutdown()
    }

    @Test("a policy session that never intervenes stays byte-exact in both directions")
    func passingPolicyIsByteExact() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstreamTap = try await TCPTap.start(group: group)
        let harness = try await RelayHarness.start(relay: { configuration in
            upstreamTap.interpose(upstreamOf: &configuration)
            configuration.mediationPolicy = { _ in ClosurePolicy { _ in .pass } }
        })
        let clientTap = try await TCPTap.start(group: group, targetPort: harness.relayAddress.port!)
        let client = try #require(try await harness.connect { $0.port = clientTap.port }.connection)
        let bulk = String(repeating: "{\"_id\":\"doc\",\"n\":12345},", count: 12_000)
        for compressed in [false, true] {
            _ = try await withTimeout { try await client.request(.request(profile: "bulk", body: body(bulk), compressed: compressed)) }
            _ = try await withTimeout { try await client.request(.request(profile: "note", body: body("n"), noReply: true)) }
        }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await withTimeout { try await clientTap.closed.get() }
        try await withTimeout { try await upstreamTap.closed.get() }
        let clientSent = TCPTap.webSocketBytes(clientTap.forward.withLockedValue { $0 })
        let upstreamGot = TCPTap.webSocketBytes(upstreamTap.forward.withLockedValue { $0 })
        let upstreamSent = TCPTap.webSocketBytes(upstreamTap.backward.withLockedValue { $0 })
        let clientGot = TCPTap.webSocketBytes(clientTap.backward.withLockedValue { $0 })
        #expect(clientSent.count > 250_000)
        #expect(upstreamSent.count > 250_000, "the echoed bulk replies came back")
        #expect(RelayByteExactnessTests.firstDifference(clientSent, upstreamGot) == nil)
        #expect(RelayByteExactnessTests.firstDifference(upstreamSent, clientGot) == nil)
        try await harness.shutdown()
        try await clientTap.close()
        try await upstreamTap.close()
        try await group.shutdownGracefully()
    }

    @Test("a delayed request is released by the session's timer and keeps its place ahead of later requests")
    func delayedRequestThroughSockets() async throws {
        let seen = NIOLockedValueBox<[String]>([])
        let harness = try await RelayHarness.start(upstream: { configuration in
            configuration.onRequest = { request, handler in
                seen.withLockedValue { $0.append(request.properties["seq"] ?? "") }
                RelayHarness.echo(request, handler)
            }
        }, relay: { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    head.type == .request && head.properties["seq"] == "1" ? .delay(.milliseconds(100), rule: "slow-first") : .pass
                }
            }
        })
        let client = try await harness.connected()
        let first = try await client.send(.request(profile: "echo", properties: ["seq": "1"], body: body("one"), compressed: true))
        let second = try await client.send(.request(profile: "echo", properties: ["seq": "2"], body: body("two"), compressed: true))
        let replies = try await withTimeout { [try await first.get(), try await second.get()] }
        #expect(replies.map { $0.properties["seq"] } == ["1", "2"])
        #expect(replies.map { String(buffer: $0.body) } == ["one", "two"])
        #expect(seen.withLockedValue { $0 } == ["1", "2"])
        let verdict = try await harness.recorder.first { if case .verdict = $0 { true } else { false } }
        if case .verdict(let event) = verdict { #expect(event.action == "delay 100ms" && event.rule == "slow-first") }
        // Later traffic still flows through the re-encoded direction.
        let third = try await withTimeout { try await client.request(.request(profile: "echo", properties: ["seq": "3"], compressed: true)) }
        #expect(third.type == .response && third.properties["seq"] == "3")
        try await client.close()
        #expect(try await harness.recorder.sessionClosed().relayError == nil)
        try await harness.shutdown()
    }

    @Test("the upstream's changes list is filtered by document ID and the client's reply is mapped back to full positions")
    func filteredChangesThroughSockets() async throws {
        final class HideDocs: MediationPolicy, @unchecked Sendable {
            func decide(head: MediatedHead) -> HeadDecision {
                head.type == .request && ChangesFilter.Kind(profile: head.profile) != nil ? .awaitBody(rule: "hide-b") : .pass
            }
            func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision {
                ChangesFilter.decision(for: body, rule: "hide-b") { $0 != "b" }
            }
        }
        let clientSaw = NIOLockedValueBox<[String]>([])
        let harness = try await RelayHarness.start(relay: { $0.mediationPolicy = { _ in HideDocs() } })
        let outcome = try await harness.connect { configuration in
            configuration.onRequest = { request, handler in
                clientSaw.withLockedValue { $0.append(String(buffer: request.body)) }
                // The client wants the first entry it was shown (no known ancestors) and not the second.
                handler.sendReply(.reply(to: request, body: body("[[]]"), compressed: true))
            }
        }
        let client = try #require(outcome.connection)
        let server = try await harness.upstream()
        let changes = #"[[11,"a","1-a"],[12,"b","1-b"],[13,"c","2-c"]]"#
        let reply = try await withTimeout { try await server.request(.request(profile: "changes", body: body(changes), compressed: true)) }
        #expect(clientSaw.withLockedValue { $0 } == [#"[[11,"a","1-a"],[13,"c","2-c"]]"#])
        #expect(reply.type == .response && String(buffer: reply.body) == "[[]]")
        // Positions: a wanted, b (hidden) not wanted, c not wanted (trailing zeros omitted).
        let second = try await withTimeout {
            try await server.request(.request(profile: "changes", body: body(#"[[14,"b","2-b"],[15,"d","1-d"]]"#), compressed: true))
        }
        #expect(String(buffer: second.body) == "[0,[]]")
        let caughtUp = try await withTimeout { try await server.request(.request(profile: "changes", body: body(#"[[16,"b","3-b"]]"#))) }
        #expect(String(buffer: caughtUp.body) == "[]")
        #expect(clientSaw.withLockedValue { $0.count } == 2)
        try await client.close()
        #expect(try await harness.recorder.sessionClosed().relayError == nil)
        try await harness.shutdown()
    }

    @Test("a verdict becomes a log line and a policy-verdict metric")
    func verdictIsLoggedAndCounted() async throws {
        let registry = PrometheusCollectorRegistry()
        let metrics = MetricsObserver(metrics: RelayMetrics(userLabels: false, factory: PrometheusMetricsFactory(registry: registry)))
        let lines = RelayLoggingTests.LineCollector(level: .info)
        let logging = LoggingObserver(logger: Logger(label: "verdicts") { _ in lines })
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.mediationPolicy = { _ in DenyProfilesPolicy(profiles: ["secret"]) }
        }, observers: [metrics, logging])
        let client = try await harness.connected()
        let denied = try await withTimeout { try await client.request(.request(profile: "secret", body: body("x"))) }
        #expect(denied.type == .error && denied.properties["Error-Code"] == "403")
        let passed = try await withTimeout { try await client.request(.request(profile: "echo", body: body("y"))) }
        #expect(passed.type == .response && String(buffer: passed.body) == "y")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        let line = try #require(lines.all.first { $0.contains("event=verdict") })
        #expect(line.contains("dir=C→U") && line.contains("type=MSG") && line.contains("number=1"))
        #expect(line.contains("profile=secret") && line.contains(#"action="deny 403""#))
        let scrape = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(MetricsFixture.value(#"blipscope_policy_verdicts_total{rule="deny-profile secret",action="deny"}"#, in: scrape) == 1)
        try await harness.shutdown()
    }
}
