import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore

/// The soak's upstream for echo sessions: answers every request with its body (compressed as
/// sent) and checks, on the way in, that each request carries the bytes its session, number,
/// length and pool say, arrives once, and in the order its sender queued it (``ArrivalOrder``).
///
/// Each session's checks live in a ``Leg`` from its first request until the client, after its
/// own close, collects them (``finish(session:)``); a session that never finishes is not collected.
public final class SoakEchoServer: Sendable {
    /// One session's request direction, touched only under the server's lock.
    final class Leg: @unchecked Sendable {
        var order: ArrivalOrder
        var corrupted = 0
        var replies: UInt64 = 0
        init(limit: UInt64) { order = ArrivalOrder(limit: limit) }
    }

    private let server: BLIPWebSocketServer
    private let legs: NIOLockedValueBox<[UInt64: Leg]>
    public var port: Int { server.localAddress.port ?? 0 }

    private init(server: BLIPWebSocketServer, legs: NIOLockedValueBox<[UInt64: Leg]>) {
        self.server = server
        self.legs = legs
    }

    public static func start(bodies: SoakBodies, numberLimit: UInt64, group: EventLoopGroup) async throws -> SoakEchoServer {
        let legs = NIOLockedValueBox<[UInt64: Leg]>([:])
        var configuration = BLIPWebSocketServer.Configuration()
        configuration.onRequest = { request, handler in
            let properties = request.properties
            guard let session = properties[SoakProperty.session].flatMap(UInt64.init),
                  let number = properties[SoakProperty.number].flatMap(UInt64.init),
                  let length = properties[SoakProperty.length].flatMap(Int.init),
                  let pool = properties[SoakProperty.pool].flatMap(SoakBodies.Pool.init(rawValue:)) else {
                handler.sendReply(.error(to: request.number, domain: "BLIP", code: 400, message: "not a soak message"))
                return
            }
            let intact = request.body.readableBytes == length
                && request.body == bodies.body(session: session, number: number, length: length, pool: pool)
            let replyNumber = legs.withLockedValue { legs in
                let leg = legs[session] ?? Leg(limit: numberLimit)
                legs[session] = leg
                leg.order.arrived(number, singleFrame: request.frameCount == 1)
                if !intact { leg.corrupted += 1 }
                leg.replies += 1
                return leg.replies
            }
            guard !request.isNoReply else { return }
            handler.sendReply(.reply(to: request, properties: [SoakProperty.number: String(number),
                                                                SoakProperty.replyNumber: String(replyNumber)],
                                     body: request.body, compressed: request.isCompressed))
        }
        return SoakEchoServer(server: try await BLIPWebSocketServer.start(configuration, group: group), legs: legs)
    }

    /// What the server saw of `session`'s requests, as a tally (reordered, duplicated,
    /// corrupted); forgets the session. Call once the session has closed.
    func finish(session: UInt64) -> SessionTally {
        var tally = SessionTally()
        guard let leg = legs.withLockedValue({ $0.removeValue(forKey: session) }) else { return tally }
        tally.add(leg.order)
        tally.corrupted += leg.corrupted
        return tally
    }

    public func close() async throws { try await server.close() }
}
