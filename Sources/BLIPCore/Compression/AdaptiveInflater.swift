import NIOCore

/// The default ``RawInflater`` (``DecodeLibrary/isal``): zlib for small frames, ISA-L for large
/// ones, one stream between them.
///
/// ISA-L inflates a 16 KiB frame of JSON about twice as fast as zlib, but every call ends by saving
/// 32 KiB of history, so on frames of a few hundred bytes it is slower than zlib. Which library
/// takes a frame is guessed from what the frames before it inflated to, with some hysteresis
/// (``InflaterChoice``): frames come in runs of like sizes (a multi-frame message's are full). At
/// a frame boundary a sync flush has closed every block, so the window is the whole state of the
/// stream: switching copies it from one library to the other (32 KiB at most, about what one ISA-L
/// call copies anyway).
final class AdaptiveInflater: RawInflater {
    private var zlib: ZlibInflater?
    private var isal: ISALInflater?
    private var choice = InflaterChoice()
    /// The library that holds the stream's window now (``choice`` may already want the other).
    private var usesISAL = false

    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int {
        if choice.usesISAL != usesISAL { try switchLibrary(toISAL: choice.usesISAL) }
        let produced: Int
        if choice.usesISAL {
            produced = try isal!.inflateFrame(payload, into: &output, limit: limit)
        } else {
            if zlib == nil { zlib = try ZlibInflater() }
            produced = try zlib!.inflateFrame(payload, into: &output, limit: limit)
        }
        choice.inflated(produced)
        return produced
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
        usesISAL = toISAL
    }
}

/// Which library inflates a direction's next frame, from what its frames inflated to: after a
/// large one, ISA-L; back to zlib only after a run of small ones, so the short last frame of each
/// large message does not move the window to zlib and back (two 32 KiB copies, and the next
/// message's first 16 KiB frame inflated by the slower library).
///
/// The output, not the compressed size, decides: how much work a frame is depends on how many
/// symbols it holds, which its compressed size does not tell (a 16 KiB frame of JSON deflated to
/// 1.3 KiB took ISA-L 2.6 times fewer instructions than zlib; one of long repeats, under 2 KiB too,
/// took zlib fewer).
struct InflaterChoice: Equatable {
    /// After a frame that inflated to at least this many bytes, ISA-L takes the next one.
    static let largeFrameOutput = 8 * 1024
    /// Consecutive smaller frames after which zlib takes the stream back.
    static let smallRunBeforeZlib = 4

    /// Who inflates the next frame.
    private(set) var usesISAL = false
    private var smallRun = 0

    /// Notes what a frame inflated to.
    mutating func inflated(_ outputBytes: Int) {
        if outputBytes >= Self.largeFrameOutput {
            smallRun = 0
            usesISAL = true
        } else {
            smallRun += 1
            if smallRun >= Self.smallRunBeforeZlib { usesISAL = false }
        }
    }
}
