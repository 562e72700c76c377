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
        private let frames = NIOLockedValueBox<[(WebSocketOpcode, String)]>([])
        private let waiters = NIOLockedValueBox<[EventLoopPromise<String>]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .ping || frame.opcode == .pong {
                let text = String(buffer: frame.unmaskedData)
                frames.withLockedValue { $0.append((frame.opcode, text)) }
                if frame.opcode == .pong {
                    for waiter in waiters.withLockedValue({ w in defer { w.removeAll() }; return w }) { waiter.succeed(text) }
                }
            }
            context.fireChannelRead(data)
        }

        /// Waiters still pending when the channel goes away fail instead of leaking.
        func channelInactive(context: ChannelHandlerContext) {
            for waiter in waiters.withLockedValue({ w in defer { w.removeAll() }; return w }) {
                waiter.fail(ChannelError.ioOnClosedChannel)
            }
            context.fireChannelInactive()
        }

        var pings: [String] { frames.withLockedValue { $0.filter { $0.0 == .ping }.map(\.1) } }

        /// The payload of the first PONG that arrives after the call (bounded by the caller's timeout).
        func nextPong(on channel: Channel) -> EventLoopFuture<String> {
            let promise = channel.eventLoop.makePromise(of: String.self)
            waiters.withLockedValue { $0.append(promise) }
            return promise.futureResult
        }

        static func install(on connection: BLIPConnection) async throws -> ControlFrameRecorder {
            let recorder = ControlFrameRecorder()
            let channel = connection.channel
            try await channel.eventLoop.submit {
                let blip = try channel.pipeline.syncOperations.handler(type: BLIPChannelHandler.self)
                try channel.pipeline.syncOperations.addHandler(recorder, position: .before(blip))
            }.get()
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
        let server = try #require(harness.upstreamConnections.withLockedValue { $0.first })
        let clientSide = try await ControlFrameRecorder.install(on: client)
        let serverSide = try await ControlFrameRecorder.install(on: server)

        // The client pings: the relay answers with the same payload.
        let clientPong = clientSide.nextPong(on: client.channel)
        try await client.channel.writeAndFlush(Self.ping("from-client", masked: true))
        let answered = try await withTimeout { try await clientPong.get() }
        #expect(answered == "from-client")

        // The upstream pings: the relay answers it too.
        let serverPong = serverSide.nextPong(on: server.channel)
        try await server.channel.writeAndFlush(Self.ping("from-upstream", masked: false))
        let upstreamAnswered = try await withTimeout { try await serverPong.get() }
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
        let server = try #require(harness.upstreamConnections.withLockedValue { $0.first })
        let clientSaw = try await withTimeout { try await client.closed.get() }
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(clientSaw.code == 1001)
        #expect(upstreamSaw.code == 1001)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "idle_timeout")
        try await harness.shutdown()
    }

    @Test func trafficKeepsASessionAliveAcrossSeveralIdlePeriods() async throws {
        let harness = try await RelayHarness.start(relay: { $0.idleTimeout = .milliseconds(1500) })
        let client = try await harness.connected()
        let clientSide = try await ControlFrameRecorder.install(on: client)
        // Pings every ~250 ms for well over the idle period: each answered PONG proves the session is open.
        for index in 0..<10 {
            let pong = clientSide.nextPong(on: client.channel)
            try await client.channel.writeAndFlush(Self.ping("keep-\(index)", masked: true))
            let answered = try await withTimeout { try await pong.get() }
            #expect(answered == "keep-\(index)")
            try await Task.sleep(for: .milliseconds(250))  // spacing, not synchronization
        }
        let reply = try await withTimeout { try await client.request(.request(profile: "still-here")) }
        #expect(reply.type == .response)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        try await harness.shutdown()
    }

    /// A raw TCP client that sends half an upgrade request and then nothing.
    final class Silent: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
    }

    @Test func aClientThatNeverFinishesItsUpgradeIsDisconnected() async throws {
        let harness = try await RelayHarness.start(relay: { $0.clientHandshakeTimeout = .milliseconds(300) })
        let channel = try await ClientBootstrap(group: harness.group)
            .channelInitializer { $0.pipeline.addHandler(Silent()) }
            .connect(to: harness.relayAddress).get()
        try await channel.writeAndFlush(ByteBuffer(string: "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
        // The relay closes the connection; no session ever opened.
        try await withTimeout { try await channel.closeFuture.get() }
        #expect(!harness.recorder.all.contains { if case .sessionOpened = $0 { true } else { false } })
        try await harness.shutdown()
    }
}
