import BLIPCore
import BLIPNIO
import NIOCore
import NIOPosix

/// The peers the relay benchmark drives: an in-process BLIP echo server and clients that keep a
/// fixed number of requests in flight on the connection's own event loop.
enum BenchPeers {
    /// An echo server: every request that expects a reply gets its body back, compressed as sent.
    static func startEchoServer(group: EventLoopGroup) async throws -> BLIPWebSocketServer {
        var configuration = BLIPWebSocketServer.Configuration()
        configuration.onRequest = { request, handler in
            guard !request.isNoReply else { return }
            handler.sendReply(.reply(to: request, body: request.body, compressed: request.isCompressed))
        }
        return try await BLIPWebSocketServer.start(configuration, group: group)
    }

    static func connect(port: Int, group: EventLoopGroup) async throws -> BLIPConnection {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = port
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        let outcome = try await BLIPWebSocketClient.connect(configuration, group: group)
        guard let connection = outcome.connection else {
            throw BenchError("handshake refused on port \(port): \(outcome)")
        }
        return connection
    }

    /// Sends `count` copies of `request`, keeping `inFlight` unanswered; returns each reply's
    /// round-trip time in nanoseconds (all on the connection's event loop, no task hops).
    static func run(_ connection: BLIPConnection, request: BLIPMessage, count: Int, inFlight: Int) async throws -> [UInt64] {
        let promise = connection.channel.eventLoop.makePromise(of: [UInt64].self)
        try await connection.onLoop { handler in
            let state = PumpState(count: count)
            func sendNext() {
                guard state.sent < state.count else { return }
                state.sent += 1
                let start = NIODeadline.now().uptimeNanoseconds
                handler.sendRequest(request).assumeIsolated().whenComplete { result in
                    switch result {
                    case .failure(let error):
                        promise.fail(error)
                    case .success(let reply):
                        guard reply.body.readableBytes == request.body.readableBytes else {
                            promise.fail(BenchError("echo body of \(reply.body.readableBytes) bytes, sent \(request.body.readableBytes)"))
                            return
                        }
                        state.latencies.append(NIODeadline.now().uptimeNanoseconds - start)
                        if state.latencies.count == state.count { promise.succeed(state.latencies) } else { sendNext() }
                    }
                }
            }
            for _ in 0..<min(inFlight, count) { sendNext() }
        }
        return try await promise.futureResult.get()
    }

    /// Event-loop-confined counters of one benchmark run.
    final class PumpState {
        let count: Int
        var sent = 0
        var latencies: [UInt64] = []
        init(count: Int) {
            self.count = count
            latencies.reserveCapacity(count)
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
