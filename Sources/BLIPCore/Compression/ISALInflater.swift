import CISAL
import NIOCore

/// A ``RawInflater`` over Intel ISA-L's `isal_inflate` (``DecodeLibrary/isalOnly``; the default
/// ``AdaptiveInflater`` uses it for large frames).
///
/// ISA-L keeps the last 32 KiB of output in its own state at the end of every call, so the
/// history of a direction survives from frame to frame whatever happens to the output buffers.
/// Its state is larger than zlib's (about 90 KiB against 45 KiB); a direction creates it at its
/// first compressed frame.
final class ISALInflater: RawInflateCalls {
    private let state: UnsafeMutablePointer<inflate_state>
    /// What the last frame inflated to.
    private var lastOutput = 0

    init() {
        state = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_DEFLATE)   // raw deflate: no wrapper, no checksum
        state.pointee.hist_bits = 0                      // the full 32 KiB window
    }

    deinit {
        state.deallocate()
    }

    /// At the end of every call ISA-L keeps the window at the end of the valid part of its
    /// output buffer (all output since the stream began while that is under 32 KiB).
    func copyHistory(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let valid = Int(state.pointee.tmp_out_valid)
        let length = min(valid, rawDeflateWindowSize, buffer.count)
        guard length > 0 else { return 0 }
        let window = UnsafeRawPointer(cisal_inflate_tmp_out_buffer(state)!) + (valid - length)
        buffer.baseAddress!.copyMemory(from: window, byteCount: length)
        return length
    }

    func replaceHistory(with history: UnsafeRawBufferPointer) throws(BLIPError) {
        isal_inflate_reset(state)
        guard let base = history.baseAddress, history.count > 0 else { return }
        let status = isal_inflate_set_dict(state, UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)),
                                           UInt32(history.count))
        guard status == 0 else { throw BLIPError(.inflateFailed, "isal_inflate_set_dict failed with ISA-L status \(status)") }
    }

    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int {
        var produced = 0
        defer { lastOutput = produced }
        // Room for the whole frame in one call if it is like the one before (every call ends by
        // saving 32 KiB of history, so a second call for the same frame is not cheap).
        let room = min(max(4096, 8 * payload.readableBytes, lastOutput + 1024), rawInflateMaxOutputRoom)
        try inflatePayloadAndTrailer(payload, into: &output, room: room, produced: &produced, limit: max(0, limit))
        return produced
    }

    /// Runs `isal_inflate` over `input` (``RawInflateCalls/feed(_:into:room:produced:limit:)``);
    /// once a call fills its room, each next call asks for at least 16 KiB.
    func feed(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer, room: Int,
              produced: inout Int, limit: Int) -> BLIPError? {
        guard let base = input.baseAddress, input.count > 0 else { return nil }
        state.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        state.pointee.avail_in = UInt32(input.count)
        defer {
            state.pointee.next_in = nil
            state.pointee.avail_in = 0
        }
        var outputWasFull = false
        while true {
            let availableBefore = Int(state.pointee.avail_in)
            var status: Int32 = 0
            var outputFull = false
            // Once a call filled the buffer, ask for a full room: the output goes on.
            let asked = min(outputWasFull ? max(room, 16 * 1024) : room, limit + 1 - produced)
            let written = output.writeWithUnsafeMutableBytes(minimumWritableBytes: asked) { out in
                // Never more than one byte past the limit: enough to tell that it was passed.
                let capacity = min(out.count, limit + 1 - produced)
                state.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                state.pointee.avail_out = UInt32(capacity)
                status = isal_inflate(state)
                let used = capacity - Int(state.pointee.avail_out)
                // Output that did not fit waits in ISA-L's own buffer for the next call.
                outputFull = state.pointee.avail_out == 0
                state.pointee.next_out = nil
                state.pointee.avail_out = 0
                return used
            }
            produced += written
            outputWasFull = outputFull
            if produced > limit {
                return BLIPError(.inflatedFrameTooLarge, "a frame inflates to more than \(limit) bytes")
            }
            guard status >= 0 else {
                return BLIPError(.inflateFailed, "inflate failed: \(Self.describe(status))")
            }
            if state.pointee.block_state == ISAL_BLOCK_FINISH {
                // A final block ends the stream; a sender may start a new one after it, at the
                // next byte. Whole bytes ISA-L read ahead into its bit buffer go back to the input.
                let readAhead = Int(state.pointee.read_in_length) / 8
                let consumed = input.count - Int(state.pointee.avail_in)
                guard readAhead <= consumed else {
                    return BLIPError(.inflateFailed, "inflate failed: a new deflate stream starts inside a trailer")
                }
                let rest = Int(state.pointee.avail_in) + readAhead
                isal_inflate_reset(state)
                if rest == 0 { return nil }
                state.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)) + (input.count - rest)
                state.pointee.avail_in = UInt32(rest)
                continue
            }
            if state.pointee.avail_in == 0 && !outputFull { return nil }
            if written == 0 && Int(state.pointee.avail_in) == availableBefore {
                return BLIPError(.inflateFailed, "inflate failed: no progress (ISA-L block state \(state.pointee.block_state.rawValue))")
            }
        }
    }

    private static func describe(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: return "invalid block"
        case ISAL_INVALID_SYMBOL: return "invalid code"
        case ISAL_INVALID_LOOKBACK: return "invalid distance too far back"
        default: return "ISA-L status \(status)"
        }
    }
}
