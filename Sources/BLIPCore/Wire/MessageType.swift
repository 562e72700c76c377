/// The 3-bit type field of a frame's flags (wire-format reference §2.1).
public enum MessageType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case request = 0
    case response = 1
    case error = 2
    case ackRequest = 4
    case ackResponse = 5

    /// True for ACKMSG and ACKRPY, which carry a byte count and no checksum (§2.5).
    @inlinable public var isAck: Bool { rawValue >= 4 }

    /// True for RPY and ERR, which answer a request of the peer.
    @inlinable public var isReply: Bool { self == .response || self == .error }

    /// The ACK type that acknowledges a message of this type (an ERR is acknowledged with ACKRPY).
    public var ackType: MessageType {
        switch self {
        case .request: return .ackRequest
        default: return .ackResponse
        }
    }

    /// The protocol's own spelling: MSG, RPY, ERR, ACKMSG, ACKRPY.
    public var description: String { staticDescription.description }

    /// ``description`` as a static string: its bytes can be copied without making a String.
    public var staticDescription: StaticString {
        switch self {
        case .request: return "MSG"
        case .response: return "RPY"
        case .error: return "ERR"
        case .ackRequest: return "ACKMSG"
        case .ackResponse: return "ACKRPY"
        }
    }
}
