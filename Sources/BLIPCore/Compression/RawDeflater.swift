import CZlib
import NIOCore

/// One raw-DEFLATE (window 2^15) deflate stream, kept for the life of a connection direction.
/// Each call compresses one frame's data and ends with a sync flush whose `00 00 FF FF` is
/// stripped, as LiteCore and go-blip do (wire-format reference §3.3).
final class RawDeflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// `level` 1…9 (LiteCore's default is 6); memLevel 9 and the default strategy as LiteCore.
    init(level: Int32 = 6) throws(BLIPError) {
        stream = try ZStream.make("deflateInit2", code: .deflateFailed) { czlib_deflateInit2($0, level, -15, 9, Z_DEFAULT_STRATEGY) }
    }

    /// A deflater in the same state as `other` (zlib's `deflateCopy`): both go on from the same
    /// history, independently.
    init(copying other: RawDeflater) throws(BLIPError) {
        stream = try ZStream.make("deflateCopy", code: .deflateFailed) { deflateCopy($0, other.stream) }
    }

    deinit {
        deflateEnd(stream)
        ZStream.free(stream)
    }

    /// Compresses `first` then `second` (one frame's chunk, in two pieces) with a sync flush at
    /// the end and appends the result, minus the trailer, to `output`. Returns the number of bytes
    /// appended; 0 only for empty input (§3.5).
    func deflateFrame(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                      into output: inout ByteBuffer) throws(BLIPError) -> Int {
        guard first.count + second.count > 0 else { return 0 }
        let start = output.writerIndex
        let bound = Int(deflateBound(stream, uLong(first.count + second.count))) + 16
        if !first.isEmpty { try run(first, flush: second.isEmpty ? Z_SYNC_FLUSH : Z_NO_FLUSH, bound: bound, into: &output) }
        if !second.isEmpty { try run(second, flush: Z_SYNC_FLUSH, bound: bound, into: &output) }
        let total = output.writerIndex - start
        guard total >= 4,
              output.getInteger(at: output.writerIndex - 4, endianness: .big, as: UInt32.self) == 0x0000_FFFF
        else {
            throw BLIPError(.deflateFailed, "sync flush did not end with 00 00 FF FF")
        }
        output.moveWriterIndex(to: output.writerIndex - 4)
        return total - 4
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, bound: Int,
                     into output: inout ByteBuffer) throws(BLIPError) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            var status: Int32 = Z_OK
            var outputFull = false
            output.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { out in
                stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(out.count)
                status = deflate(stream, flush)
                let used = out.count - Int(stream.pointee.avail_out)
                outputFull = stream.pointee.avail_out == 0
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
                return used
            }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw BLIPError(.deflateFailed, "deflate failed with zlib status \(status)")
            }
            if !outputFull && stream.pointee.avail_in == 0 { return }
        }
    }
}
