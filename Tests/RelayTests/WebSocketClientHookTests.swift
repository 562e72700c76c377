import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// ``BLIPWebSocketClient/Configuration/onConnection``: what a test (or a tool) starts on a new
/// connection runs on its event loop before `connect` returns, so it misses none of the session.
@Suite struct WebSocketClientHookTests {
    @Test func theHookRunsOnceOnTheConnectionsLoopBeforeConnectReturnsAndNotForARefusal() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let upstream = try await RelayHarness.echoUpstream(group: group)
        /// Whether each call ran on the connection's event loop, in call order.
        let calls = NIOLockedValueBox<[Bool]>([])
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = upstream.localAddress.port!
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        configuration.onConnection = { connection in
            calls.withLockedValue { $0.append(connection.channel.eventLoop.inEventLoop) }
        }
        let accepted = configuration
        let connection = try #require(try await withTimeout { try await BLIPWebSocketClient.connect(accepted, group: group) }.connection)
        #expect(calls.withLockedValue { $0 } == [true], "called once, on its loop, before connect returned")
        let reply = try await withTimeout { try await connection.request(.request(profile: "echo", body: body("x"))) }
        #expect(String(buffer: reply.body) == "x")
        try await connection.close()

        // A refused handshake has no connection: the hook is not called.
        configuration.path = "/db"
        configuration.subprotocols = ["not-blip"]
        let refused = configuration
        let outcome = try await withTimeout { try await BLIPWebSocketClient.connect(refused, group: group) }
        #expect(outcome.connection == nil)
        #expect(calls.withLockedValue { $0 }.count == 1)
        try? await upstream.close()
        try await group.shutdownGracefully()
    }
}
