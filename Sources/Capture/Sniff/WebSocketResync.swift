import NIOCore
import WebSocketWire

/// Finds where WebSocket frames start in one direction of a stream whose beginning was not
/// captured: the first offset from which a chain of plausible frame headers follows.
///
/// Plausible: FIN set or a data opcode, no reserved bits, a defined non-continuation opcode,
/// masked exactly when the client sent it (RFC 6455 §5.1), control payloads ≤ 125 bytes,
/// lengths within `maxMessageBytes`. The chain must be three frames long, or end exactly at the
/// end of the bytes seen so far. A heuristic: it can be fooled, and says nothing when unsure.
enum WebSocketResync {
    /// The offset of the first frame, or nil if no offset in the first `searchLimit` bytes fits yet.
    static func frameStart(
        in bytes: ByteBuffer, sender: WebSocketMessageParser.Sender, maxMessageBytes: Int, searchLimit: Int = 64 << 10
    ) -> Int? {
        let count = bytes.readableBytes
        for start in 0..<min(count, searchLimit) {
            var position = start
            var chain = 0
            var firstOpcode: UInt8?
            while position < count {
                // A header is at most 14 bytes.
                guard let headerBytes = bytes.getSlice(at: bytes.readerIndex + position, length: min(14, count - position)),
                      let header = WebSocketFrameHeader(parsing: headerBytes.readableBytesView) else { break }
                guard isPlausible(header, sender: sender, maxMessageBytes: maxMessageBytes) else { chain = -1; break }
                if firstOpcode == nil { firstOpcode = header.opcode }
                chain += 1
                position += header.headerLength + Int(header.payloadLength)
                if chain >= 3 { break }
            }
            guard chain > 0, firstOpcode != WebSocketFrameHeader.continuation else { continue }
            if chain >= 3 || position == count { return start }
        }
        return nil
    }

    private static func isPlausible(
        _ header: WebSocketFrameHeader, sender: WebSocketMessageParser.Sender, maxMessageBytes: Int
    ) -> Bool {
        guard header.reservedBits == 0, header.problem(sentBy: sender, allowedReservedBits: 0) == nil else { return false }
        return header.payloadLength <= UInt64(maxMessageBytes)
    }
}
