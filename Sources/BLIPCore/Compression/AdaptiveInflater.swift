import NIOCore

/// The default ``RawInflater`` (``DecodeLibrary/isal``): zlib for small frames, ISA-L for large
/// ones, one stream between them.
///
/// ISA-L inflates a 16 KiB frame of JSON about twice as fast as zlib, but every call ends by saving
/// 32 KiB of history, so on frames of a few hundred bytes it is slower than zlib. Which library
/// takes a frame is guessed from the frame before it in the direction (frames come in runs of
/// like sizes: a multi-frame message's frames are all full). At a frame boundary a sync flush
/// has closed every block, so the window is the whole state of the stream: switching copies it
/// from one library to the other (32 KiB at most, about what one ISA-L call copies anyway).
final class AdaptiveInflater: RawInflater {
    /// A frame after one that inflated to at least this many bytes goes to ISA-L.
    static let largeFrameOutput = 8 * 1024

    private var zlib: ZlibInflater?
    private var isal: ISALInflater?
    private var usesISAL = false
    private var lastOutput = 0

    func inflateFrame(_ payload: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(BLIPError) -> Int {
        let large = lastOutput >= Self.largeFrameOutput
        if large != usesISAL { try switchLibrary(toISAL: large) }
        let produced: Int
        if usesISAL {
            produced = try isal!.inflateFrame(payload, into: &output, limit: limit)
        } else {
            if zlib == nil { zlib = try ZlibInflater() }
            produced = try zlib!.inflateFrame(payload, into: &output, limit: limit)
        }
        lastOutput = produced
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
