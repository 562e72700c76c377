import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
@testable import Relay

/// Keep-alive is per hop (wire-format reference §1.1): the relay answers each peer's PING itself and
/// never passes PINGs or PONGs on; a silent session ends at the idle timeout, and a client that
/// never finishes its upgrade request is cut off at the handshake timeout.
@Suite struct RelayKeepAliveTests {
    /// Sits in front of a connection's ``BLIPChannelHandler`` and remembers the control frames that
    /// reach it, passing everything on.
    final class ControlFrameRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = WebSocketFrame

        private let pingLog = EventLog<String>()
        private let pongLog = EventLog<String>()
        /// PONGs already handed out by ``nextPong(within:)``.
        private let pongsTaken = NIOLockedValueBox(0)

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let text = String(buffer: frame.unmaskedData)
            if frame.opcode == .ping { pingLog.append(text) } else if frame.opcode == .pong { pongLog.append(text) }
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            pongLog.append(Self.closed)
            context.fireChannelInactive()
        }

        /// Stands in the PONGs' log where the connection closed.
        static let closed = "(connection closed)"

        var pings: [String] { pingLog.all }

        /// The payloads of the first `count` PONGs in arrival order, or of those before the
        /// connection closed followed by ``closed``; throws after `seconds` without either.
        func pongs(_ count: Int, within seconds: Double = 60) async throws -> [String] {
            _ = try await pongLog.first(within: seconds) { index, pong in index == count - 1 || pong == Self.closed }
            return Array(pongLog.all.prefix(count))
        }

        /// The next PONG's payload, in arrival order; throws after `seconds` without one.
        func nextPong(within seconds: Double = 60) async throws -> String {
            let position = pongsTaken.withLockedValue { taken in
                defer { taken += 1 }
                return taken
            }
            return try await pongLog.first(within: seconds) { index, _ in index == position }
        }

        static func install(on connection: BLIPConnection) async throws -> ControlFrameRecorder {
            let channel = connection.channel
            return try await channel.eventLoop.submit { try installNow(on: channel) }.get()
        }

        /// The same, on the channel's event loop.
        static func installNow(on channel: any Channel) throws -> ControlFrameRecorder {
            let recorder = ControlFrameRecorder()
            let blip = try channel.pipeline.syncOperations.handler(type: BLIPChannelHandler.self)
            try channel.pipeline.syncOperations.addHandler(recorder, position: .before(blip))
            return recorder
        }
    }

    static func ping(_ text: String, masked: Bool) -> WebSocketFrame {
        // NIO's frame encoder applies the mask key itself.
        WebSocketFrame(fin: true, opcode: .ping, maskKey: masked ? .random() : nil, data: ByteBuffer(string: text))
    }

    @Test func eachHopsPingIsAnsweredByTheRelayAndNeverPassedOn() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "hi")) }
        let server = try await harness.upstream()
        let clientSide = try await ControlFrameRecorder.install(on: client)
        let serverSide = try await ControlFrameRecorder.install(on: server)

        // The client pings: the relay answers with the same payload.
        try await client.channel.writeAndFlush(Self.ping("from-client", masked: true))
        let answered = try await clientSide.nextPong()
        #expect(answered == "from-client")

        // The upstream pings: the relay answers it too.
        try await server.channel.writeAndFlush(Self.ping("from-upstream", masked: false))
        let upstreamAnswered = try await serverSide.nextPong()
        #expect(upstreamAnswered == "from-upstream")

        // A round trip after the pings: anything forwarded before it has arrived by now.
        let reply = try await withTimeout { try await client.request(.request(profile: "after", body: body("x"))) }
        #expect(reply.body.readableBytes == 1)
        #expect(serverSide.pings.isEmpty, "the client's PING stayed on the client hop")
        #expect(clientSide.pings.isEmpty, "the upstream's PING stayed on the upstream hop")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    @Test func aSilentSessionEndsAtTheIdleTimeoutWith1001() async throws {
        let harness = try await RelayHarness.start(relay: { $0.idleTimeout = .milliseconds(300) })
        let client = try await harness.connected()
        let server = try await harness.upstream()
        let clientSaw = try await withTimeout { try await client.closed.get() }
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(clientSaw.code == 1001)
        #expect(upstreamSaw.code == 1001)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "idle_timeout")
        try await harness.shutdown()
    }

    /// Control frames alone keep a session open for four idle timeouts. The client pings from a
    /// timer on the event loop that also runs the relay and its idle check (`threads: 1`),
    /// started as its upgrade completes: NIO runs due timers in deadline order and a loop
    /// iteration reads sockets before it runs them, so however long the machine stalls the loop
    /// or the test's task, a ping is written and read between any two of the relay's idle checks,
    /// and the session can only close if the relay ignores PINGs and PONGs.
    @Test func trafficKeepsASessionAliveAcrossSeveralIdlePeriods() async throws {
        let idleTimeout = TimeAmount.milliseconds(1000)
        let spacing = TimeAmount.milliseconds(50)
        let harness = try await RelayHarness.start(relay: { $0.idleTimeout = idleTimeout }, threads: 1)
        let pinging = NIOLockedValueBox<(recorder: ControlFrameRecorder, pinger: RepeatedTask)?>(nil)
        let client = try #require(try await harness.connect { configuration in
            configuration.onConnection = { connection in
                let channel = connection.channel
                guard let recorder = try? ControlFrameRecorder.installNow(on: channel) else { return }
                var sent = 0
                // `scheduleRepeatedTask` waits `spacing` after each ping.
                let pinger = channel.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: spacing) { _ in
                    channel.writeAndFlush(Self.ping("keep-\(sent)", masked: true), promise: nil)
                    sent += 1
                }
                pinging.withLockedValue { $0 = (recorder, pinger) }
            }
        }.connection)
        let (clientSide, pinger) = try #require(pinging.withLockedValue { $0 })
        // The 80th PONG comes at least 80 × 50 ms, four idle timeouts, after the first ping.
        let pongs = Int(4 * idleTimeout.nanoseconds / spacing.nanoseconds)
        let answered = try await clientSide.pongs(pongs)
        #expect(answered == (0..<pongs).map { "keep-\($0)" }, "each PING answered once, in order")
        #expect(!harness.recorder.all.contains { if case .sessionClosed = $0 { true } else { false } })

        // The pings go on until the client closes, in the same turn of the loop: a pause of the
        // test's task from here on leaves no silence either.
        let reply = try await withTimeout { try await client.request(.request(profile: "still-here")) }
        #expect(reply.type == .response)
        try await client.onLoop { handler in
            pinger.cancel()
            handler.close(code: 1000, reason: "")
        }
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        try await harness.shutdown()
    }

    /// A raw TCP client that sends half an upgrade request and then nothing.
    final class Silent: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
    }

    @Test func aClientThatNeverFinishesItsRequestHeadGets408AndIsDisconnected() async throws {
        let harness = try await RelayHarness.start(relay: { $0.clientHandshakeTimeout = .milliseconds(300) })
        let client = try await RawUpgradeClient.send("GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                                                     port: harness.relayAddress.port!, group: harness.group)
        #expect(try await client.responseHead().first == "HTTP/1.1 408 Request Timeout")
        // The relay closes the connection; no session ever opened, and the refusal was reported.
        try await withTimeout { try await client.channel.closeFuture.get() }
        let refused = try await harness.recorder.first { if case .handshakeRefused = $0 { true } else { false } }
        if case .handshakeRefused(let refusal) = refused { #expect(refusal.status == .requestTimeout) }
        #expect(!harness.recorder.all.contains { if case .sessionOpened = $0 { true } else { false } })
        try await harness.shutdown()
    }

    /// The client-header limit stops counting once the request is in: an upstream slower than it
    /// still gets the whole upstream timeout, and the client the documented 504. The request is
    /// written the moment the connection is up, so that only the upstream can be slow.
    @Test func waitingForTheUpstreamIsNotCountedAgainstTheClient() async throws {
        let harness = try await RelayHarness.start(upstream: { $0.decide = { _ in .hang } }, relay: { config in
            config.clientHandshakeTimeout = .seconds(3)
            config.upstreamHandshakeTimeout = .seconds(6)
        })
        let head = try await ImmediateRequest.send(
            "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n",
            port: harness.relayAddress.port!)
        #expect(head.first == "HTTP/1.1 504 Gateway Timeout")
        try await harness.shutdown()
    }
}
