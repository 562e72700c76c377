import NIOCore

/// One raw-DEFLATE (window 2^15) inflate stream, kept for the life of a connection direction
/// (wire-format reference §3.2): the 32 KiB history carries over from frame to frame. Not
/// thread-safe: it belongs to one direction's codec.
protocol RawInflater: AnyObject {
    /// Inflates one frame's payload followed by the `00 00 FF FF` sync trailer the sender removed
    /// (§3.4), appending the output to `output`. Returns the number of bytes appended.
    /// Throws when the stream is invalid or the output would exceed `limit` bytes (a
    /// decompression bomb): at most `limit` + 1 bytes are ever written to `output`.
    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int

    /// Copies the window later frames may refer back to (the last 32 KiB of output at most)
    /// into `buffer` (32 KiB); returns its length. Only between frames.
    func copyHistory(into buffer: UnsafeMutableRawBufferPointer) -> Int

    /// Starts a new stream whose window is `history`. Only between frames: after a frame's sync
    /// flush, no block is open and the window is the whole state (§3.2, §3.3).
    func replaceHistory(with history: UnsafeRawBufferPointer) throws(BLIPError)
}

/// The deflate window: how far back a reference may reach.
let rawDeflateWindowSize = 32 * 1024

/// Most free space an inflater asks of its output buffer per library call: with the frame's
/// limit (never more than `limit` + 1 - bytes already produced), it bounds what one frame makes
/// the output buffer reserve beyond what the frame really inflates to.
let rawInflateMaxOutputRoom = 256 * 1024

/// The end of a sync flush, which senders strip from every compressed frame (§3.3).
let rawDeflateSyncTrailer: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

/// Payloads up to this size are inflated joined with their trailer, in one library call: the
/// join is a copy on the stack; a second call for the four trailer bytes cost more (ISA-L saves
/// its 32 KiB window at the end of every call; zlib goes through its whole state machine again).
let rawInflateJoinedPayloadSize = 16 * 1024

/// Calls `body` with `payload` followed by ``rawDeflateSyncTrailer`` in one buffer on the stack
/// (at most ``rawInflateJoinedPayloadSize`` + 4 bytes).
@inline(__always)
func withTrailerJoined<Result>(to payload: ByteBuffer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    let count = payload.readableBytes
    precondition(count <= rawInflateJoinedPayloadSize, "only small payloads are joined on the stack")
    return withUnsafeTemporaryAllocation(byteCount: count + rawDeflateSyncTrailer.count, alignment: 1) { joined in
        payload.withUnsafeReadableBytes { joined.copyMemory(from: $0) }
        rawDeflateSyncTrailer.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: joined[count...]).copyMemory(from: $0) }
        return body(UnsafeRawBufferPointer(joined))
    }
}

/// An inflater whose library takes raw input in calls: what a frame is made of (the payload and
/// the sync trailer, joined or not) is decided once here, for every library.
protocol RawInflateCalls: RawInflater {
    /// Runs the library over `input`, appending to `output` and adding to `produced`; returns the
    /// error, if any (closures over raw bytes cannot throw a typed error). `room`: the free space
    /// the first call asks of `output`; never more than `limit` + 1 bytes produced in all.
    func feed(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer, room: Int,
              produced: inout Int, limit: Int) -> BLIPError?
}

extension RawInflateCalls {
    /// Inflates `payload` and the sync trailer after it (§3.4), adding what they make to
    /// `produced`. A payload of up to ``rawInflateJoinedPayloadSize`` goes in one call, joined
    /// with the trailer; a larger one in its own calls, then the trailer, which only ends the
    /// empty stored block and so asks for little room (a full room would grow, and copy, a
    /// buffer the frame just filled).
    @inline(__always)
    func inflatePayloadAndTrailer(_ payload: ByteBuffer, into output: inout ByteBuffer, room: Int,
                                  produced: inout Int, limit: Int) throws(BLIPError) {
        var failure: BLIPError?
        if payload.readableBytes <= rawInflateJoinedPayloadSize {
            failure = withTrailerJoined(to: payload) { joined in
                feed(joined, into: &output, room: room, produced: &produced, limit: limit)
            }
        } else {
            payload.withUnsafeReadableBytes { input in
                failure = feed(input, into: &output, room: room, produced: &produced, limit: limit)
            }
            if failure == nil {
                failure = rawDeflateSyncTrailer.withUnsafeBytes { trailer in
                    feed(trailer, into: &output, room: 64, produced: &produced, limit: limit)
                }
            }
        }
        if let failure { throw failure }
    }
}

extension DecodeLibrary {
    /// A new inflate stream from this library.
    func makeRawInflater() throws(BLIPError) -> any RawInflater {
        switch self {
        case .isal: return AdaptiveInflater()
        case .isalOnly: return ISALInflater()
        case .zlib: return try ZlibInflater()
        }
    }
}

extension RawInflater {
    /// A new inflater of `library` that goes on from this one's history, independently (a stream
    /// that forks: the relay re-encoding one leg of a recorded direction). Only between frames,
    /// where the window is the whole state (§3.3); the copy inflates what this one would.
    func copy(using library: DecodeLibrary) throws(BLIPError) -> any RawInflater {
        let copy = try library.makeRawInflater()
        let window = UnsafeMutableRawBufferPointer.allocate(byteCount: rawDeflateWindowSize, alignment: 1)
        defer { window.deallocate() }
        let length = copyHistory(into: window)
        try copy.replaceHistory(with: UnsafeRawBufferPointer(rebasing: window[0..<length]))
        return copy
    }
}
