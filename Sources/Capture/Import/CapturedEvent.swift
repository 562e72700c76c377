import NIOCore

/// Which way a captured event travelled.
public enum CaptureDirection: Sendable, Hashable, CaseIterable {
    case clientToServer, serverToClient
}

/// How one direction of a TCP connection ended.
public enum TCPCloseKind: Sendable, Hashable {
    case fin, rst
}

/// Something that happened on a captured connection, in one direction.
public struct CapturedEvent: Sendable {
    public enum Kind: Sendable {
        /// A complete WebSocket data message: opcode 1 (text) or 2 (binary); the payload is
        /// unmasked and its fragments are joined. BLIP sends one BLIP frame per binary message
        /// (wire format §1.1).
        case message(opcode: UInt8, payload: ByteBuffer)
        case ping(ByteBuffer)
        case pong(ByteBuffer)
        /// A WebSocket close frame; `code` is `nil` when the frame had no payload.
        case close(code: UInt16?, reason: String)
        /// This direction cannot be decoded further (a gap in the TCP stream, a malformed HTTP head
        /// or WebSocket frame, a limit). It is the direction's last event apart from `tcpClosed`.
        case error(CaptureError)
        /// The sender of this direction sent FIN or RST. Always the direction's last event.
        case tcpClosed(TCPCloseKind)
    }

    /// When the event was complete: the capture time of the TCP segment that supplied its last
    /// missing byte. Never earlier than the direction's previous event.
    public var time: CaptureTimestamp
    public var direction: CaptureDirection
    public var kind: Kind
    /// 0-based file position of that segment's packet (Wireshark's frame number minus one).
    public var packetIndex: Int

    public init(time: CaptureTimestamp, direction: CaptureDirection, kind: Kind, packetIndex: Int) {
        self.time = time
        self.direction = direction
        self.kind = kind
        self.packetIndex = packetIndex
    }

    /// ``time`` as seconds since 1970; precise to about a quarter of a microsecond.
    public var timestamp: Double { time.secondsSince1970 }
}
