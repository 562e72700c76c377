import NIOCore
import NIOWebSocket

/// The parsed header of one WebSocket frame (RFC 6455 §5.2, base framing).
struct WebSocketFrameHeader: Equatable, Sendable {
    var fin: Bool
    var opcode: WebSocketOpcode
    /// The masking key, present on client-to-server frames (RFC 6455 §5.3): its 4 bytes as
    /// received in one word, the first in the high bits. The payload is then masked with it.
    var mask: UInt32?
    var payloadLength: Int
    /// 2 to 14 bytes: first byte, length byte, 0/2/8 bytes of extended length, 0/4 of mask key.
    var headerLength: Int

    /// The whole frame's size on the wire.
    var frameLength: Int { headerLength + payloadLength }

    /// Binary, text or continuation: a frame that carries (part of) a message.
    var isData: Bool { opcode == .binary || opcode == .text || opcode == .continuation }

    /// ``mask`` as NIO's type. Made only when asked: NIO's initializer is generic and not
    /// inlinable, and pass-through frames never need it.
    var maskKey: WebSocketMaskingKey? {
        mask.map { mask in withUnsafeBytes(of: mask.bigEndian) { WebSocketMaskingKey($0)! } }
    }
}

/// Why a hop's byte stream is not acceptable WebSocket framing. Each case ends the session with
/// the close code of its ``relayError``: 1009 for ``frameTooLarge``, 1002 for the others.
enum WebSocketFrameError: Error, Equatable, Sendable {
    /// The length field says more than the relay's `maxFrameSize` (or more than `Int.max`).
    case frameTooLarge(length: UInt64)
    /// RSV1-3 set (the bits of the first byte, `0x70` mask) although no extension is negotiated:
    /// the relay strips `Sec-WebSocket-Extensions` from both handshakes (RFC 6455 §5.2).
    case reservedBits(UInt8)
    /// An opcode RFC 6455 §5.2 reserves (0x3-0x7, 0xB-0xF).
    case reservedOpcode(UInt8)
    /// A control frame (CLOSE, PING, PONG) without FIN (RFC 6455 §5.5).
    case fragmentedControlFrame
    /// A control frame with more than 125 payload bytes (RFC 6455 §5.5).
    case multiByteControlFrameLength

    /// The relay's error for it. The two control-frame cases keep the wording NIO's frame decoder
    /// gave them (the relay used that decoder before), so close reasons and logs read as before.
    var relayError: RelayError {
        switch self {
        case .frameTooLarge: return RelayError(.frameTooLarge)
        case .reservedBits(let bits):
            return RelayError(.webSocketProtocol("reserved bits 0x\(String(bits, radix: 16)) set, no extension negotiated"))
        case .reservedOpcode(let opcode): return RelayError(.webSocketProtocol("reserved opcode 0x\(String(opcode, radix: 16))"))
        case .fragmentedControlFrame: return RelayError(.webSocketProtocol("fragmentedControlFrame"))
        case .multiByteControlFrameLength: return RelayError(.webSocketProtocol("multiByteControlFrameLength"))
        }
    }
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
struct WebSocketFrameScanner {
    /// One complete frame in the scanner's buffer.
    struct Frame: Equatable, Sendable {
        var header: WebSocketFrameHeader
        /// Index of its first header byte, valid until the next ``append(_:)``.
        var start: Int
        var end: Int { start + header.frameLength }
    }

    /// Largest payload accepted, as NIO's `WebSocketFrameDecoder(maxFrameSize:)`.
    let maxFrameSize: Int
    /// Received bytes: from the reader index, those not yet returned in a frame by a previous read.
    private var buffer = ByteBuffer()
    /// Start of the first byte not yet returned by ``next()`` (at or after the reader index).
    private var cursor = 0

    init(maxFrameSize: Int) {
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes held that belong to no complete frame returned yet.
    var pendingBytes: Int { buffer.writerIndex - cursor }

    /// Adds a received buffer behind the incomplete tail of the previous ones. Without a tail (the
    /// usual case) the buffer is scanned in place; with one, it is appended to the tail.
    mutating func append(_ bytes: ByteBuffer) {
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
    mutating func next() throws(WebSocketFrameError) -> Frame? {
        let available = buffer.writerIndex - cursor
        guard available >= 2 else { return nil }
        let offset = cursor - buffer.readerIndex
        let parsed = buffer.withUnsafeReadableBytes { bytes in
            Self.parseHeader(UnsafeRawBufferPointer(rebasing: bytes[offset...]), maxFrameSize: maxFrameSize)
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
    func bytes(from start: Int, to end: Int) -> ByteBuffer {
        buffer.getSlice(at: start, length: end - start)!
    }

    /// `frame`'s payload as received (still masked if it was).
    func payload(of frame: Frame) -> ByteBuffer {
        buffer.getSlice(at: frame.start + frame.header.headerLength, length: frame.header.payloadLength)!
    }

    /// `frame` as NIO's type, for the code that works on frames (control frames, mediation).
    func webSocketFrame(_ frame: Frame) -> WebSocketFrame {
        WebSocketFrame(fin: frame.header.fin, opcode: frame.header.opcode, maskKey: frame.header.maskKey,
                       data: payload(of: frame))
    }

    /// The header at the start of `bytes`: nil while incomplete, an error as soon as the bytes in
    /// show one.
    static func parseHeader(_ bytes: UnsafeRawBufferPointer, maxFrameSize: Int)
        -> Result<WebSocketFrameHeader?, WebSocketFrameError> {
        guard bytes.count >= 2 else { return .success(nil) }
        let first = bytes[0], second = bytes[1]
        if first & 0x70 != 0 { return .failure(.reservedBits(first & 0x70)) }
        let code = first & 0x0F
        switch code {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
        default: return .failure(.reservedOpcode(code))
        }
        let masked = second & 0x80 != 0
        var length = UInt64(second & 0x7F)
        var headerLength = 2
        if length == 126 {
            guard bytes.count >= 4 else { return .success(nil) }
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            headerLength = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return .success(nil) }
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(bytes[index]) }
            headerLength = 10
        }
        // The order of NIO's decoder: size first, then the control-frame rules.
        if length > UInt64(maxFrameSize) { return .failure(.frameTooLarge(length: length)) }
        let isControl = code & 0x08 != 0
        let fin = first & 0x80 != 0
        if isControl && !fin { return .failure(.fragmentedControlFrame) }
        if isControl && length > 125 { return .failure(.multiByteControlFrameLength) }
        var mask: UInt32?
        if masked {
            guard bytes.count >= headerLength + 4 else { return .success(nil) }
            mask = UInt32(bytes[headerLength]) << 24 | UInt32(bytes[headerLength + 1]) << 16
                | UInt32(bytes[headerLength + 2]) << 8 | UInt32(bytes[headerLength + 3])
            headerLength += 4
        }
        return .success(WebSocketFrameHeader(fin: fin, opcode: WebSocketOpcode(encodedWebSocketOpcode: code)!,
                                             mask: mask, payloadLength: Int(length), headerLength: headerLength))
    }
}
