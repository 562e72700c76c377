import NIOCore

/// Why a hop's byte stream is not acceptable WebSocket framing. A relay ends the session on
/// each: with 1009 for ``frameTooLarge``, 1002 for the others (RFC 6455 §7.4.1).
public enum WebSocketFrameError: Error, Equatable, Sendable {
    /// The length field says more than the scanner's `maxFrameSize` (or more than `Int.max`).
    case frameTooLarge(length: UInt64)
    /// RSV1-3 set (the bits of the first byte, `0x70` mask) although no extension is negotiated
    /// (RFC 6455 §5.2).
    case reservedBits(UInt8)
    /// An opcode RFC 6455 §5.2 reserves (0x3-0x7, 0xB-0xF).
    case reservedOpcode(UInt8)
    /// A control frame (CLOSE, PING, PONG) without FIN (RFC 6455 §5.5).
    case fragmentedControlFrame
    /// A control frame with more than 125 payload bytes (RFC 6455 §5.5).
    case multiByteControlFrameLength
    /// A frame from a client without a masking key (RFC 6455 §5.1: the server must close), when
    /// the scanner reads a client's bytes and requires masks.
    case unmaskedClientFrame
}

/// Finds WebSocket frames in the bytes a hop receives, without copying or unmasking them
/// (RFC 6455 §5.2). The relay forwards what it finds as slices of the received buffers, so every
/// byte leaves as it arrived, masks and length encodings included.
///
/// Use per read: ``append(_:)`` the received buffer, call ``next()`` until it returns nil, and
/// take slices (``bytes(from:to:)``, ``payload(of:)``) of the frames it returned before the next
/// ``append(_:)``, which invalidates their indices (slices already taken stay valid).
///
/// Checks, each as soon as the bytes it needs are in (a too large frame is refused from its header,
/// before its payload is held): the length against `maxFrameSize`; RSV bits (no extension is ever
/// negotiated); reserved opcodes; control frames that are fragmented or longer than 125 bytes.
/// After a ``WebSocketFrameError`` the scanner is of no further use.
///
/// Limits: between reads it holds only the incomplete frame at the end, at most
/// `maxFrameSize + 13` bytes (a 14-byte header, all but the last payload byte); a frame is
/// returned only once complete. Lengths are not required to be in their shortest form (RFC 6455
/// asks senders for it; the relay passes on whatever it got).
public struct WebSocketFrameScanner {
    /// One complete frame in the scanner's buffer.
    public struct Frame: Equatable, Sendable {
        public var header: WebSocketFrameHeader
        /// Index of its first header byte, valid until the next ``append(_:)``.
        public var start: Int
        public var end: Int { start + header.frameLength }
    }

    /// Largest payload accepted, as NIO's `WebSocketFrameDecoder(maxFrameSize:)`.
    public let maxFrameSize: Int
    /// Refuse frames without a masking key (``WebSocketFrameError/unmaskedClientFrame``): set when
    /// the bytes come from a client (RFC 6455 §5.1).
    public let requiresMask: Bool
    /// Received bytes: from the reader index, those not yet returned in a frame by a previous read.
    private var buffer = ByteBuffer()
    /// Start of the first byte not yet returned by ``next()`` (at or after the reader index).
    private var cursor = 0

    public init(maxFrameSize: Int, requiresMask: Bool = false) {
        self.maxFrameSize = maxFrameSize
        self.requiresMask = requiresMask
    }

    /// Bytes held that belong to no complete frame returned yet.
    public var pendingBytes: Int { buffer.writerIndex - cursor }

    /// Adds a received buffer behind the incomplete tail of the previous ones. Without a tail (the
    /// usual case) the buffer is scanned in place; with one, it is appended to the tail.
    public mutating func append(_ bytes: ByteBuffer) {
        buffer.moveReaderIndex(to: cursor)
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            buffer.discardReadBytes()  // keeps only the tail; a no-op while one frame accumulates
            buffer.writeImmutableBuffer(bytes)
        }
        cursor = buffer.readerIndex
    }

    /// The next complete frame, or nil when the rest is incomplete.
    public mutating func next() throws(WebSocketFrameError) -> Frame? {
        let available = buffer.writerIndex - cursor
        guard available >= 2 else { return nil }
        let offset = cursor - buffer.readerIndex
        let parsed = buffer.withUnsafeReadableBytes { bytes in
            Self.parseHeader(UnsafeRawBufferPointer(rebasing: bytes[offset...]), maxFrameSize: maxFrameSize,
                             requiresMask: requiresMask)
        }
        switch parsed {
        case .failure(let error): throw error
        case .success(nil): return nil
        case .success(let header?):
            guard header.frameLength <= available else { return nil }
            let frame = Frame(header: header, start: cursor)
            cursor += header.frameLength
            return frame
        }
    }

    /// The received bytes from `start` to `end` (frame boundaries from ``next()``), as one slice.
    public func bytes(from start: Int, to end: Int) -> ByteBuffer {
        buffer.getSlice(at: start, length: end - start)!
    }

    /// `frame`'s payload as received (still masked if it was).
    public func payload(of frame: Frame) -> ByteBuffer {
        buffer.getSlice(at: frame.start + frame.header.headerLength, length: Int(frame.header.payloadLength))!
    }

    /// The header at the start of `bytes`: nil while incomplete, an error as soon as the bytes in
    /// show one.
    public static func parseHeader(_ bytes: UnsafeRawBufferPointer, maxFrameSize: Int, requiresMask: Bool = false)
        -> Result<WebSocketFrameHeader?, WebSocketFrameError> {
        guard bytes.count >= 2 else { return .success(nil) }
        let first = bytes[0]
        if first & 0x70 != 0 { return .failure(.reservedBits(first & 0x70)) }
        let code = first & 0x0F
        switch code {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
        default: return .failure(.reservedOpcode(code))
        }
        // Checked as soon as the length is known, before the mask key may have arrived: the
        // order of NIO's decoder, size first, then the control-frame rules.
        let second = bytes[1]
        var length = UInt64(second & 0x7F)
        if length == 126, bytes.count >= 4 {
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
        } else if length == 127, bytes.count >= 10 {
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(bytes[index]) }
        } else if length >= 126 {
            return .success(nil)
        }
        if length > UInt64(maxFrameSize) { return .failure(.frameTooLarge(length: length)) }
        let isControl = code & 0x08 != 0
        if isControl && first & 0x80 == 0 { return .failure(.fragmentedControlFrame) }
        if isControl && length > 125 { return .failure(.multiByteControlFrameLength) }
        if requiresMask && second & 0x80 == 0 { return .failure(.unmaskedClientFrame) }
        return .success(WebSocketFrameHeader.parse(bytes))
    }
}
