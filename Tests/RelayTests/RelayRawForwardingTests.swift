import BLIPCore
import BLIPNIO
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import WebSocketWire
@testable import Relay

/// Pass-through forwards runs of data frames as the bytes they arrived in: a burst of frames the
/// client writes at once, with a PING in the middle, reaches the upstream byte for byte without
/// the PING, which the relay answers itself; each frame is still counted and decoded. Framing the
/// relay refuses ends the session with the close code RFC 6455 gives it.
@Suite struct RelayRawForwardingTests {
    /// Writes `bytes` to the connection's socket as they are, below NIO's frame encoder.
    static func writeRaw(_ bytes: ByteBuffer, on connection: BLIPConnection) async throws {
        let channel = connection.channel
        try await channel.eventLoop.flatSubmit {
            do {
                let encoder = try channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
                let promise = channel.eventLoop.makePromise(of: Void.self)
                encoder.writeAndFlush(NIOAny(bytes), promise: promise)
                return promise.futureResult
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }

    /// A masked frame as a client sends it.
    static func clientFrame(_ opcode: WebSocketOpcode, _ payload: ByteBuffer) -> ByteBuffer {
        WebSocketFrameWriter.frame(opcode: UInt8(webSocketOpcode: opcode), payload: payload, mask: .random())
    }

    @Test func aBurstOfFramesWithAPingInsideIsForwardedByteExactWithoutThePing() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstreamTap = try await TCPTap.start(group: group)
        let profiles = EventLog<String>()
        let harness = try await RelayHarness.start(upstream: { upstream in
            upstream.onRequest = { request, _ in profiles.append(request.properties["Profile"] ?? "?") }
        }, relay: { configuration in
            upstreamTap.interpose(upstreamOf: &configuration)
        })
        let clientTap = try await TCPTap.start(group: group, targetPort: harness.relayAddress.port!)
        let client = try #require(try await harness.connect { $0.port = clientTap.port }.connection)
        let server = try await harness.upstream()
        let clientSide = try await RelayKeepAliveTests.ControlFrameRecorder.install(on: client)
        let serverSide = try await RelayKeepAliveTests.ControlFrameRecorder.install(on: server)

        // The client has sent no BLIP frame yet, so a fresh endpoint's messages 1… are next in line.
        // Two bursts: a PING in the middle of the first, and one ending the second (the run of data
        // frames before it is written before it is answered, and only once).
        let endpoint = BLIPEndpoint()
        let count = 24
        for (burstNumber, pingAfter) in [(0, count / 2 - 1), (1, count - 1)] {
            var burst = ByteBuffer()
            for index in 0..<count {
                let number = burstNumber * count + index
                _ = endpoint.send(request: .request(profile: "burst-\(number)", body: body("#\(number)"), noReply: true))
                let frame = try #require(try endpoint.nextFrame())
                var bytes = Self.clientFrame(.binary, frame.bytes)
                burst.writeBuffer(&bytes)
                if index == pingAfter {
                    var ping = Self.clientFrame(.ping, body("ping-\(burstNumber)"))
                    burst.writeBuffer(&ping)
                }
            }
            try await Self.writeRaw(burst, on: client)
            #expect(try await clientSide.nextPong() == "ping-\(burstNumber)")
        }
        _ = try await profiles.first { position, _ in position == 2 * count - 1 }
        #expect(profiles.all == (0..<2 * count).map { "burst-\($0)" })
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        try await withTimeout { try await clientTap.closed.get() }
        try await withTimeout { try await upstreamTap.closed.get() }

        let clientSent = TCPTap.webSocketBytes(clientTap.forward.withLockedValue { $0 })
        let upstreamGot = TCPTap.webSocketBytes(upstreamTap.forward.withLockedValue { $0 })
        #expect(upstreamGot.count > 2 * count * 6, "every burst frame (and the CLOSE) reached the upstream tap")
        #expect(RelayByteExactnessTests.firstDifference(Self.withoutPings(clientSent), upstreamGot) == nil,
                "client → upstream is byte-exact, the PINGs left out")
        #expect(serverSide.pings.isEmpty, "the client's PING stayed on the client hop")
        #expect(summary.statistics.framesForwarded[0] == 2 * count, "each data frame counted")
        let decoded = harness.recorder.all.filter {
            if case .message(let event) = $0, event.direction == .clientToServer { true } else { false }
        }
        #expect(decoded.count == 2 * count, "each message decoded after forwarding")

        try await harness.shutdown()
        try await clientTap.close()
        try await upstreamTap.close()
        try await group.shutdownGracefully()
    }

    @Test func aClientBreakingTheFramingEndsOnlyItsOwnSession() async throws {
        let harness = try await RelayHarness.start()
        let neighbour = try await harness.connected()
        _ = try await harness.upstream(0)  // the neighbour's, so the next one is the hostile client's
        let hostile = try await harness.connected()
        let hostileUpstream = try await harness.upstream(1)

        // RSV bits set without a negotiated extension: not a frame the relay can pass on.
        try await Self.writeRaw(ByteBuffer(bytes: [0xF2, 0x80, 1, 2, 3, 4]), on: hostile)
        #expect(try await withTimeout { try await hostile.closed.get() }.code == 1002)
        #expect(try await withTimeout { try await hostileUpstream.closed.get() }.code == 1002)
        let ended = try await harness.recorder.sessionClosed()
        #expect(ended.relayError?.code == "websocket_protocol")

        // The neighbour's session never noticed.
        let reply = try await withTimeout { try await neighbour.request(.request(profile: "still-fine", body: body("ok"))) }
        #expect(reply.type == .response)
        #expect(String(buffer: reply.body) == "ok")
        try await neighbour.close()
        let summary = try await harness.recorder.first {
            if case .sessionClosed(let summary) = $0, summary.info.id != ended.info.id { summary } else { nil }
        }
        #expect(summary.relayError == nil)
        #expect(summary.clientClose?.code == 1000)
        try await harness.shutdown()
    }

    /// A client's WebSocket stream without its PING frames.
    static func withoutPings(_ stream: [UInt8]) -> [UInt8] {
        var kept: [UInt8] = []
        var offset = 0
        while offset < stream.count {
            let parsed = stream.withUnsafeBytes {
                WebSocketFrameScanner.parseHeader(UnsafeRawBufferPointer(rebasing: $0[offset...]), maxFrameSize: 1 << 20)
            }
            guard case .success(let header?) = parsed else { return kept + stream[offset...] }
            let end = min(stream.count, offset + header.frameLength)
            if header.opcode != WebSocketFrameHeader.ping { kept += stream[offset..<end] }
            offset = end
        }
        return kept
    }

    @Test func aCloseIsPassedOnAsTheBytesItArrivedAs() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstreamTap = try await TCPTap.start(group: group)
        let harness = try await RelayHarness.start(relay: { configuration in
            upstreamTap.interpose(upstreamOf: &configuration)
        })
        let client = try await harness.connected()
        let server = try await harness.upstream()

        // A CLOSE whose 5-byte payload is announced in the 16-bit length form: legal to parse, not
        // the shortest form, so a rebuilt header would differ from what the client sent.
        let key: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        let payload: [UInt8] = [0x03, 0xE8] + Array("bye".utf8)
        let close: [UInt8] = [0x88, 0x80 | 126, 0x00, UInt8(payload.count)] + key
            + payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
        try await Self.writeRaw(ByteBuffer(bytes: close), on: client)

        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(upstreamSaw.code == 1000)
        #expect(upstreamSaw.reason == "bye")
        _ = try await harness.recorder.sessionClosed()
        try await withTimeout { try await upstreamTap.closed.get() }
        let upstreamGot = TCPTap.webSocketBytes(upstreamTap.forward.withLockedValue { $0 })
        #expect(upstreamGot == close, "the CLOSE reached the upstream byte for byte, mask and length form kept")

        try await harness.shutdown()
        try await upstreamTap.close()
        try await group.shutdownGracefully()
    }

    @Test func aFrameOverTheLimitEndsTheSessionWith1009() async throws {
        let summary = try await Self.sessionEnded(by: Self.clientFrame(.binary, ByteBuffer(repeating: 0, count: 1025)),
                                                  closing: 1009, relay: { $0.limits.maxWebSocketFrameSize = 1024 })
        #expect(summary.relayError?.code == "frame_too_large")
        #expect(summary.statistics.framesForwarded[0] == 0)
    }

    @Test func aPingOver125BytesEndsTheSessionWith1002() async throws {
        let summary = try await Self.sessionEnded(by: Self.clientFrame(.ping, ByteBuffer(repeating: 0, count: 126)),
                                                  closing: 1002)
        #expect(summary.relayError?.code == "websocket_protocol")
        #expect(summary.relayError?.description == "WebSocket protocol error: multiByteControlFrameLength")
    }

    /// Writes `frame` from a client through a relay set up by `relay`, checks that both peers
    /// were closed with `code`, and returns the session's summary.
    static func sessionEnded(by frame: ByteBuffer, closing code: UInt16,
                             relay: (inout RelayConfiguration) -> Void = { _ in }) async throws -> SessionSummary {
        let harness = try await RelayHarness.start(relay: relay)
        let client = try await harness.connected()
        let server = try await harness.upstream()
        try await writeRaw(frame, on: client)
        #expect(try await withTimeout { try await client.closed.get() }.code == code)
        #expect(try await withTimeout { try await server.closed.get() }.code == code)
        let summary = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
        return summary
    }
}
