import NIOCore

/// The default ``RawInflater`` (``DecodeLibrary/isal``): zlib for small frames, ISA-L for large
/// ones, one stream between them.
///
/// ISA-L inflates a 16 KiB frame of JSON about twice as fast as zlib, but every call ends by saving
/// 32 KiB of history, so on frames of a few hundred bytes it is slower than zlib. Which library
/// takes a frame is decided by its compressed size, with some hysteresis (``InflaterChoice``). At
/// a frame boundary a sync flush has closed every block, so the window is the whole state of the
/// stream: switching copies it from one library to the other (32 KiB at most, about what one ISA-L
/// call copies anyway).
final class AdaptiveInflater: RawInflater {
    private var zlib: ZlibInflater?
    private var isal: ISALInflater?
    private var choice = InflaterChoice()
    private var usesISAL: Bool { choice.usesISAL }

    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int {
        var next = choice
        next.take(payloadBytes: payload.readableBytes)
        if next.usesISAL != usesISAL { try switchLibrary(toISAL: next.usesISAL) }
        choice = next
        if usesISAL {
            return try isal!.inflateFrame(payload, into: &output, limit: limit)
        }
        if zlib == nil { zlib = try ZlibInflater() }
        return try zlib!.inflateFrame(payload, into: &output, limit: limit)
    }

    private var active: (any RawInflater)? { usesISAL ? isal : zlib }

    func copyHistory(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        active?.copyHistory(into: buffer) ?? 0
    }

    /// Gives the active library the window (a fresh inflater has none yet: zlib takes it, as it
    /// takes the first frame).
    func replaceHistory(with history: UnsafeRawBufferPointer) throws(BLIPError) {
        if usesISAL {
            try isal!.replaceHistory(with: history)
        } else {
            if zlib == nil { zlib = try ZlibInflater() }
            try zlib!.replaceHistory(with: history)
        }
    }

    /// Moves the window from the active library to the other one.
    private func switchLibrary(toISAL: Bool) throws(BLIPError) {
        if toISAL && isal == nil { isal = ISALInflater() }
        if !toISAL && zlib == nil { zlib = try ZlibInflater() }
        let from: (any RawInflater)? = toISAL ? zlib : isal
        let to: any RawInflater = toISAL ? isal! : zlib!
        var failure: BLIPError?
        withUnsafeTemporaryAllocation(byteCount: rawDeflateWindowSize, alignment: 16) { window in
            let length = from?.copyHistory(into: window) ?? 0
            do throws(BLIPError) { try to.replaceHistory(with: UnsafeRawBufferPointer(rebasing: window[..<length])) }
            catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// Which library inflates the next frame of a direction, from the frame's compressed size: a
/// large one goes to ISA-L at once; the stream goes back to zlib only after a run of small ones,
/// so the short last frame of each large message does not move the window twice (two 32 KiB
/// copies, and a 16 KiB frame inflated by the slower library, per message).
struct InflaterChoice: Equatable {
    /// A frame with at least this many compressed payload bytes goes to ISA-L (JSON inflates
    /// 3 to 6 times: from about 8 KiB of output, where ISA-L starts to win).
    static let largePayload = 2 * 1024
    /// Consecutive small frames after which zlib takes the stream back.
    static let smallRunBeforeZlib = 4

    private(set) var usesISAL = false
    private var smallRun = 0

    /// Notes the next frame's compressed size; ``usesISAL`` then says who inflates it.
    mutating func take(payloadBytes: Int) {
        if payloadBytes >= Self.largePayload {
            smallRun = 0
            usesISAL = true
        } else {
            smallRun += 1
            if smallRun >= Self.smallRunBeforeZlib { usesISAL = false }
        }
    }
}
