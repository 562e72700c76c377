import BLIPCore
import NIOCore

/// Two ``BLIPEndpoint``s joined in memory: frames written by one are received by the other, in
/// order, with nothing in between. For codec tests without sockets.
public final class EndpointPair {
    public let client: BLIPEndpoint
    public let server: BLIPEndpoint
    /// Every frame that crossed, in order, with its direction.
    public private(set) var wire: [(direction: BLIPDirection, bytes: ByteBuffer)] = []

    public init(limits: BLIPLimits = .default) {
        client = BLIPEndpoint(limits: limits)
        server = BLIPEndpoint(limits: limits)
    }

    /// Moves frames both ways until neither side has anything to send; returns what each side
    /// completed receiving: (messages the server received, messages the client received).
    @discardableResult
    public func pump(onServerMessage: (BLIPMessage) -> Void = { _ in },
                     onClientMessage: (BLIPMessage) -> Void = { _ in }) throws -> (toServer: [BLIPMessage], toClient: [BLIPMessage]) {
        var toServer: [BLIPMessage] = []
        var toClient: [BLIPMessage] = []
        var progressed = true
        while progressed {
            progressed = false
            if let frame = try client.nextFrame() {
                progressed = true
                wire.append((.clientToServer, frame.bytes))
                if let message = try server.receive(frame.bytes).message {
                    toServer.append(message)
                    onServerMessage(message)
                }
            }
            if let frame = try server.nextFrame() {
                progressed = true
                wire.append((.serverToClient, frame.bytes))
                if let message = try client.receive(frame.bytes).message {
                    toClient.append(message)
                    onClientMessage(message)
                }
            }
        }
        return (toServer, toClient)
    }
}
