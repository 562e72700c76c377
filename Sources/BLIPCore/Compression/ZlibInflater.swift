import CZlib
import NIOCore

/// A ``RawInflater`` over zlib's `inflate` (the reference implementation, kept for comparison:
/// ``DecodeLibrary/zlib``).
final class ZlibInflater: RawInflateCalls {
    private let stream: UnsafeMutablePointer<z_stream>
    /// What the last frame inflated to: the next one's first call asks for a little more room.
    private var lastOutput = 0

    /// The least room a frame's first call asks for. Small, so that a small message's buffer is
    /// a small block, which the C allocator hands out and takes back from its per-thread cache; a
    /// 4 KiB one took its general path, about 150 instructions per message.
    static let minimumRoom = 512
    /// Room kept beyond the expected output: zlib decodes in its fast loop only while at least
    /// 258 bytes (the longest match) of output room are left, and byte by byte after that.
    static let fastLoopRoom = 258

    init() throws(BLIPError) {
        stream = try ZStream.make("inflateInit2", code: .inflateFailed) { czlib_inflateInit2($0, -15) }
    }

    deinit {
        inflateEnd(stream)
        ZStream.free(stream)
    }

    func copyHistory(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var length: uInt = 0
        guard inflateGetDictionary(stream, buffer.baseAddress!.assumingMemoryBound(to: Bytef.self), &length) == Z_OK else { return 0 }
        return Int(length)
    }

    func replaceHistory(with history: UnsafeRawBufferPointer) throws(BLIPError) {
        inflateReset(stream)
        guard let base = history.baseAddress, history.count > 0 else { return }
        // A raw stream takes a dictionary at any time (zlib.h, inflateSetDictionary).
        let status = inflateSetDictionary(stream, base.assumingMemoryBound(to: Bytef.self), uInt(history.count))
        guard status == Z_OK else { throw BLIPError(.inflateFailed, "inflateSetDictionary failed with zlib status \(status)") }
    }

    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int {
        var produced = 0
        defer { lastOutput = produced }
        try inflatePayloadAndTrailer(payload, into: &output,
                                     room: Self.firstRoom(compressed: payload.readableBytes, lastOutput: lastOutput),
                                     produced: &produced, limit: max(0, limit))
        return produced
    }

    /// The room a frame's first call asks for: twice its compressed size, or a quarter more than
    /// the frame before inflated to, whichever is more (frames come in runs of like sizes), plus
    /// ``fastLoopRoom``; at least ``minimumRoom``, at most ``rawInflateMaxOutputRoom``. A frame
    /// that needs more fills it, and each next call asks for at least 4 KiB more.
    static func firstRoom(compressed: Int, lastOutput: Int) -> Int {
        let expected = max(2 * compressed, lastOutput + lastOutput / 4)
        return min(max(minimumRoom, expected + fastLoopRoom), rawInflateMaxOutputRoom)
    }

    /// Runs inflate over `input` (``RawInflateCalls/feed(_:into:room:produced:limit:)``); once a
    /// call fills its room, each next call asks for at least 4 KiB.
    func feed(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer, room: Int,
              produced: inout Int, limit: Int) -> BLIPError? {
        guard input.count > 0 else { return nil }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        var outputWasFull = false
        while true {
            let asked = min(outputWasFull ? max(room, 4096) : room, limit + 1 - produced)
            var status: Int32 = Z_OK
            var outputFull = false
            let written = output.writeWithUnsafeMutableBytes(minimumWritableBytes: asked) { out in
                // Never more than one byte past the limit: enough to tell that it was passed.
                let capacity = min(out.count, limit + 1 - produced)
                stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                status = inflate(stream, Z_SYNC_FLUSH)
                let used = capacity - Int(stream.pointee.avail_out)
                outputFull = stream.pointee.avail_out == 0
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
                return used
            }
            produced += written
            outputWasFull = outputFull
            if produced > limit {
                return BLIPError(.inflatedFrameTooLarge, "a frame inflates to more than \(limit) bytes")
            }
            switch status {
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR only means no progress was possible: all input used, nothing pending.
                if stream.pointee.avail_in == 0 && !outputFull { return nil }
                if status == Z_BUF_ERROR && !outputFull { return nil }
            case Z_STREAM_END:
                // A final block ends the stream; a sender may start a new one after it.
                inflateReset(stream)
                if stream.pointee.avail_in == 0 { return nil }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                return BLIPError(.inflateFailed, "inflate failed: \(message)")
            }
        }
    }
}
