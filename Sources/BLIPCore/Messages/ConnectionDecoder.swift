import NIOCore

/// Which way a frame travels through an observed connection.
public enum BLIPDirection: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// From the active peer (the side that opened the WebSocket) to the passive peer.
    case clientToServer = 0
    /// From the passive peer to the active peer.
    case serverToClient = 1

    public var reversed: BLIPDirection { self == .clientToServer ? .serverToClient : .clientToServer }
    public var description: String { self == .clientToServer ? "client" : "server" }
}

/// Decodes both directions of one observed BLIP connection, as a proxy or a capture reader sees
/// it: each direction has its own ``DirectionDecoder``, and a request seen in one direction lets
/// the other answer it (wire-format reference §4.4, §4.5).
///
/// A fatal error stops only its own direction: later frames of that direction are reported as
/// ``BLIPError/Code`` of the original failure, while the other direction goes on.
public final class ConnectionDecoder {
    private let decoders: [DirectionDecoder]

    public init(limits: BLIPLimits = .default) {
        decoders = [DirectionDecoder(limits: limits), DirectionDecoder(limits: limits)]
    }

    public func decoder(for direction: BLIPDirection) -> DirectionDecoder { decoders[direction.rawValue] }

    /// Sets ``DirectionDecoder/exposesPayloads`` on both directions.
    public var exposesPayloads: Bool {
        get { decoders[0].exposesPayloads }
        set { for decoder in decoders { decoder.exposesPayloads = newValue } }
    }

    /// Uncompressed bytes both directions hold of partly received messages.
    public var bytesInProgress: Int { decoders[0].bytesInProgress + decoders[1].bytesInProgress }

    /// The fatal error that stopped `direction`, if any.
    public func failure(of direction: BLIPDirection) -> BLIPError? { decoders[direction.rawValue].failure }

    /// ``DirectionDecoder/stopKeepingBody(of:number:keepingFirst:)`` for a message travelling in `direction`.
    @discardableResult
    public func stopKeepingBody(of type: MessageType, number: MessageNumber, from direction: BLIPDirection,
                                keepingFirst prefix: Int = 0) -> Bool {
        decoders[direction.rawValue].stopKeepingBody(of: type, number: number, keepingFirst: prefix)
    }

    /// Decodes one frame travelling in `direction`.
    public func receive(_ bytes: ByteBuffer, from direction: BLIPDirection) throws(BLIPError) -> DecodedFrame {
        let decoded = try decoders[direction.rawValue].receive(bytes)
        if decoded.startsMessage, decoded.flags.type == .request, !decoded.flags.isNoReply {
            decoders[direction.reversed.rawValue].expectReply(to: decoded.number)
        }
        return decoded
    }
}
