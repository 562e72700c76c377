import BLIPCore

/// The side of a captured session the replayer plays: `client` dials a target and sends what the
/// client sent; `server` listens and answers like the recorded server did.
public enum ReplaySide: String, Sendable, Hashable, Codable {
    case client, server

    /// The direction of the messages this side sends.
    public var outgoing: BLIPDirection { self == .client ? .clientToServer : .serverToClient }
}
