import BLIPCore
import BLIPNIO
import NIOCore

/// What a replication session needs from its connection: send requests and replies, and close.
/// ``BLIPChannelHandler`` is one; tests may substitute a fake. Event-loop confined like the handler.
protocol BLIPPeer: AnyObject {
    func sendRequest(_ request: BLIPMessage) -> EventLoopFuture<BLIPMessage>
    func sendReply(_ reply: BLIPMessage)
    func close(code: UInt16, reason: String)
}

extension BLIPChannelHandler: BLIPPeer {}

extension BLIPPeer {
    /// Sends `reply` unless `request` asked for none (BLIP's NoReply flag).
    func answer(_ request: BLIPMessage, with reply: BLIPMessage) {
        if !request.isNoReply { sendReply(reply) }
    }

    func answer(_ request: BLIPMessage, properties: Properties = [:], body: ByteBuffer = ByteBuffer(),
                compressed: Bool = false) {
        answer(request, with: .reply(to: request, properties: properties, body: body, compressed: compressed))
    }

    func answer(_ request: BLIPMessage, error: GatewayError) {
        answer(request, with: error.errorReply(to: request))
    }
}
