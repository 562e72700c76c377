import NIOCore
import WebSocketWire

/// Turns one direction's WebSocket byte stream (everything after the HTTP 101) into messages
/// and control frames, fed in chunks as they are reassembled (RFC 6455 §5).
///
/// - Client frames must be masked and server frames must not be; client payloads are unmasked
///   with ``WebSocketMaskingKey/unmask(_:)``.
/// - Continuation fragments are joined into one message. Control frames (ping, pong, close) may
///   arrive between the fragments and are reported at once, in stream order.
/// - A message (all its fragments together) may not exceed `maxMessageBytes`; this is checked
///   from each frame header, before its payload is buffered, so memory stays bounded.
/// - The first error (a frame that breaks RFC 6455, an oversized message) is reported once and
///   the parser stops: framing cannot be recovered from a bad frame.
/// - After a close frame nothing more is parsed; any bytes that follow are reported by
///   ``finish()``, as is a message left incomplete when the stream ends.
/// - Extensions are not decoded: reserved bits in `allowedReservedBits` are accepted and the
///   payload is delivered as sent (still compressed, for permessage-deflate). Text payloads are
///   not checked for UTF-8.
public struct WebSocketMessageParser: Sendable {
    public enum Sender: Sendable, Hashable { case client, server }

    public enum Output: Sendable {
        /// A complete text (1) or binary (2) message: unmasked, fragments joined.
        case message(opcode: UInt8, payload: ByteBuffer)
        case ping(ByteBuffer)
        case pong(ByteBuffer)
        /// `code` is `nil` for an empty close frame.
        case close(code: UInt16?, reason: String)
        /// The parser stopped here.
        case error(CaptureError)
    }

    private struct FragmentedMessage {
        var opcode: UInt8
        var payload: ByteBuffer
        var firstFrame: Int
        var firstFrameOffset: Int64
    }

    private enum State {
        case open
        case closed(trailingBytes: Int, from: Int64)
        case stopped
    }

    public let sender: Sender
    public let maxMessageBytes: Int
    public let allowedReservedBits: UInt8
    /// Complete frames parsed so far.
    public private(set) var framesParsed = 0

    private var state = State.open
    private var buffer = ByteBuffer()
    /// Stream offset of `buffer`'s first readable byte.
    private var bufferOffset: Int64
    private var fragmented: FragmentedMessage?

    /// - Parameter streamOffset: the TCP stream offset of the first byte that will be fed, so
    ///   errors can name where a frame starts.
    public init(
        sender: Sender, maxMessageBytes: Int = CaptureLimits.default.maxWebSocketMessageBytes,
        allowedReservedBits: UInt8 = 0, streamOffset: Int64 = 0
    ) {
        self.sender = sender
        self.maxMessageBytes = maxMessageBytes
        self.allowedReservedBits = allowedReservedBits
        self.bufferOffset = streamOffset
    }

    /// Feeds the next bytes of the stream; returns what they completed.
    public mutating func parse(_ bytes: ByteBuffer) -> [Output] {
        switch state {
        case .stopped:
            return []
        case let .closed(trailing, from):
            state = .closed(trailingBytes: trailing + bytes.readableBytes, from: from)
            return []
        case .open:
            break
        }
        buffer.writeImmutableBuffer(bytes)
        var outputs: [Output] = []
        while case .open = state, let header = WebSocketFrameHeader(parsing: buffer.readableBytesView) {
            if let error = rejection(of: header) {
                outputs.append(stop(with: error))
                break
            }
            let frameLength = header.headerLength + Int(header.payloadLength)
            guard buffer.readableBytes >= frameLength else { break }
            outputs += consumeFrame(header)
        }
        compactBuffer()
        return outputs
    }

    /// Declares the end of the stream. Reports a message cut off by the end of the capture, and
    /// bytes that followed a close frame.
    public mutating func finish() -> [Output] {
        var outputs: [Output] = []
        let unparsed = buffer.readableBytes
        if case .stopped = state { return [] }
        if let fragmented {
            outputs.append(.error(.incompleteWebSocketMessage(
                frame: fragmented.firstFrame, streamOffset: fragmented.firstFrameOffset,
                bufferedBytes: fragmented.payload.readableBytes + unparsed
            )))
        } else if unparsed > 0 {
            outputs.append(.error(.incompleteWebSocketMessage(
                frame: framesParsed + 1, streamOffset: bufferOffset, bufferedBytes: unparsed
            )))
        }
        if case let .closed(trailing, from) = state, trailing > 0 {
            outputs.append(.error(.bytesAfterWebSocketClose(count: trailing, streamOffset: from)))
        }
        release(into: .stopped)
        return outputs
    }

    // MARK: - Frames

    /// Why `header` cannot be accepted here, as the error to report; checked before the payload
    /// is buffered so an oversized frame never is.
    private func rejection(of header: WebSocketFrameHeader) -> CaptureError? {
        let frame = framesParsed + 1
        if let problem = header.problem(sentBy: sender, allowedReservedBits: allowedReservedBits) {
            return .malformedWebSocketFrame(frame: frame, streamOffset: bufferOffset, problem)
        }
        if header.opcode == WebSocketFrameHeader.continuation, fragmented == nil {
            return .malformedWebSocketFrame(frame: frame, streamOffset: bufferOffset, .continuationWithoutStart)
        }
        if !header.isControl, header.opcode != WebSocketFrameHeader.continuation, fragmented != nil {
            return .malformedWebSocketFrame(
                frame: frame, streamOffset: bufferOffset, .newMessageInsideFragmentedMessage
            )
        }
        let joined = header.isControl ? 0 : fragmented?.payload.readableBytes ?? 0
        let messageSize = Int64(joined) + Int64(header.payloadLength)
        if messageSize > Int64(maxMessageBytes) {
            return .webSocketMessageTooLarge(
                frame: frame, streamOffset: bufferOffset, size: messageSize, limit: maxMessageBytes
            )
        }
        return nil
    }

    private mutating func consumeFrame(_ header: WebSocketFrameHeader) -> [Output] {
        let frame = framesParsed + 1
        let frameOffset = bufferOffset
        let length = Int(header.payloadLength)
        buffer.moveReaderIndex(forwardBy: header.headerLength)
        // A copy, not a slice: a slice would keep `buffer`'s storage shared and make every later
        // append copy it.
        var payload = ByteBufferAllocator().buffer(capacity: length)
        payload.writeImmutableBuffer(buffer.readSlice(length: length)!)
        header.maskingKey?.unmask(&payload)
        framesParsed = frame
        bufferOffset += Int64(header.headerLength + length)

        switch header.opcode {
        case WebSocketFrameHeader.ping: return [.ping(payload)]
        case WebSocketFrameHeader.pong: return [.pong(payload)]
        case WebSocketFrameHeader.close: return [closeOutput(payload, frame: frame, frameOffset: frameOffset)]
        case WebSocketFrameHeader.continuation:
            fragmented!.payload.writeBuffer(&payload)
            guard header.fin, let message = fragmented else { return [] }
            fragmented = nil
            return [.message(opcode: message.opcode, payload: message.payload)]
        default:
            guard header.fin else {
                fragmented = FragmentedMessage(
                    opcode: header.opcode, payload: payload, firstFrame: frame, firstFrameOffset: frameOffset
                )
                return []
            }
            return [.message(opcode: header.opcode, payload: payload)]
        }
    }

    private mutating func closeOutput(_ payload: ByteBuffer, frame: Int, frameOffset: Int64) -> Output {
        var payload = payload
        switch payload.readableBytes {
        case 0:
            enterClosed()
            return .close(code: nil, reason: "")
        case 1:
            return stop(with: .malformedWebSocketFrame(frame: frame, streamOffset: frameOffset, .closePayloadOfOneByte))
        default:
            let code = payload.readInteger(as: UInt16.self)!
            guard let reason = String(validating: payload.readableBytesView, as: UTF8.self) else {
                let error = CaptureError.malformedWebSocketFrame(frame: frame, streamOffset: frameOffset, .closeReasonNotUTF8)
                return stop(with: error)
            }
            enterClosed()
            return .close(code: code, reason: reason)
        }
    }

    // MARK: - State

    private mutating func enterClosed() {
        let trailing = buffer.readableBytes
        let from = bufferOffset
        release(into: .closed(trailingBytes: trailing, from: from))
    }

    private mutating func stop(with error: CaptureError) -> Output {
        release(into: .stopped)
        fragmented = nil
        return .error(error)
    }

    private mutating func release(into newState: State) {
        state = newState
        buffer = ByteBuffer()
    }

    private mutating func compactBuffer() {
        if buffer.readableBytes == 0 {
            buffer.clear()
        } else if buffer.readerIndex >= 64 << 10 {
            buffer.discardReadBytes()
        }
    }
}
