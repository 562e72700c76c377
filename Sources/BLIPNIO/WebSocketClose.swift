import NIOCore

/// How one side of a WebSocket ended: the code and reason of the CLOSE frame it sent, or, when the
/// TCP connection ended without one, code 1006 ("abnormal closure", never sent on the wire, RFC 6455
/// §7.1.5) and `abrupt` set. Wire-format reference §7 lists the codes the BLIP peers use.
public struct WebSocketClose: Sendable, Equatable, CustomStringConvertible {
    public var code: UInt16
    public var reason: String
    /// True when no CLOSE frame was received: the TCP connection just ended.
    public var abrupt: Bool

    public init(code: UInt16, reason: String = "", abrupt: Bool = false) {
        self.code = code
        self.reason = reason
        self.abrupt = abrupt
    }

    public static let abnormal = WebSocketClose(code: 1006, reason: "connection dropped without CLOSE", abrupt: true)

    /// Parses a CLOSE frame's (unmasked) payload: a 2-byte big-endian code and a UTF-8 reason.
    /// An empty payload means 1005 "no status received".
    public init(payload: ByteBuffer) {
        var payload = payload
        guard let code = payload.readInteger(endianness: .big, as: UInt16.self) else {
            self.init(code: 1005)
            return
        }
        self.init(code: code, reason: payload.readString(length: payload.readableBytes) ?? "")
    }

    /// The CLOSE payload for this code and reason (reason cut to the 123 bytes a control frame allows).
    public func payload(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 2 + reason.utf8.count)
        buffer.writeInteger(code, endianness: .big)
        // At most 123 bytes of reason (RFC 6455 §5.5), cut between characters so it stays UTF-8.
        var length = 0
        for character in reason {
            let size = character.utf8.count
            guard length + size <= 123 else { break }
            length += size
        }
        buffer.writeBytes(reason.utf8.prefix(length))
        return buffer
    }

    public var description: String { reason.isEmpty ? "\(code)" : "\(code) \"\(reason)\"" }
}
