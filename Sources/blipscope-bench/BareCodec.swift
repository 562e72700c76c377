import BLIPCore
import CISAL
import CZlib
import NIOCore

/// The baselines of `bench codec`: bare library calls over a workload's bytes, with none of
/// BLIPCore's framing, numbering or assembly. Inflating appends `00 00 FF FF` to every payload
/// and checksums the output; deflating sync-flushes every chunk and checksums the input.
enum BareCodec {
    /// zlib `inflate` + `crc32`. Returns the uncompressed bytes produced.
    static func zlibInflate(_ data: BenchData) -> Int {
        var stream = z_stream()
        _ = czlib_inflateInit2(&stream, -15)
        defer { inflateEnd(&stream) }
        var crc: UInt32 = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        for payload in data.wirePayloads {
            if !data.workload.compressed {
                payload.withUnsafeReadableBytes { crc = CRC32.update(crc, $0, using: .zlib) }
                total += payload.readableBytes
                continue
            }
            var produced = 0
            output.withUnsafeMutableBytes { out in
                func feed(_ input: UnsafeRawBufferPointer) {
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
                    stream.avail_in = uInt(input.count)
                    stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self) + produced
                    stream.avail_out = uInt(out.count - produced)
                    _ = inflate(&stream, Z_SYNC_FLUSH)
                    produced = out.count - Int(stream.avail_out)
                }
                payload.withUnsafeReadableBytes { feed($0) }
                trailer.withUnsafeBytes { feed($0) }
                crc = CRC32.update(crc, UnsafeRawBufferPointer(rebasing: out[..<produced]), using: .zlib)
            }
            total += produced
        }
        return total
    }

    /// ISA-L `isal_inflate` + `crc32_gzip_refl`. Returns the uncompressed bytes produced.
    static func isalInflate(_ data: BenchData) -> Int {
        let state = UnsafeMutablePointer<inflate_state>.allocate(capacity: 1)
        defer { state.deallocate() }
        isal_inflate_init(state)
        var crc: UInt32 = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        for payload in data.wirePayloads {
            if !data.workload.compressed {
                payload.withUnsafeReadableBytes { crc = CRC32.update(crc, $0, using: .isal) }
                total += payload.readableBytes
                continue
            }
            var produced = 0
            output.withUnsafeMutableBytes { out in
                func feed(_ input: UnsafeRawBufferPointer) {
                    state.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    state.pointee.avail_in = UInt32(input.count)
                    state.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: UInt8.self) + produced
                    state.pointee.avail_out = UInt32(out.count - produced)
                    _ = isal_inflate(state)
                    produced = out.count - Int(state.pointee.avail_out)
                }
                payload.withUnsafeReadableBytes { feed($0) }
                trailer.withUnsafeBytes { feed($0) }
                crc = CRC32.update(crc, UnsafeRawBufferPointer(rebasing: out[..<produced]), using: .isal)
            }
            total += produced
        }
        return total
    }

    /// zlib `deflate` (raw, window 2^15, memLevel 9, as LiteCore) + `crc32`. Returns the
    /// compressed bytes produced.
    static func zlibDeflate(_ data: BenchData, level: Int32) -> Int {
        var stream = z_stream()
        _ = czlib_deflateInit2(&stream, level, -15, 9, Z_DEFAULT_STRATEGY)
        defer { deflateEnd(&stream) }
        var crc: UInt32 = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        for chunk in data.chunks {
            chunk.withUnsafeReadableBytes { input in
                crc = CRC32.update(crc, input, using: .zlib)
                guard data.workload.compressed else { return }
                output.withUnsafeMutableBytes { out in
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
                    stream.avail_in = uInt(input.count)
                    stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(out.count)
                    _ = deflate(&stream, Z_SYNC_FLUSH)
                    total += out.count - Int(stream.avail_out) - 4
                }
            }
        }
        return total
    }

    /// ISA-L `isal_deflate` (raw, 32 KiB window, `level` 0–3) + `crc32_gzip_refl`. Returns the
    /// compressed bytes produced.
    static func isalDeflate(_ data: BenchData, level: UInt32) -> Int {
        isalDeflate(data, level: level, keep: nil)
    }

    /// Deflates with ISA-L at `level` and inflates the frames again with zlib: true when every
    /// frame ends in `00 00 FF FF` and comes back as the chunk it carries (not timed).
    static func isalDeflateRoundTrips(_ data: BenchData, level: UInt32) -> Bool {
        var frames: [[UInt8]] = []
        _ = isalDeflate(data, level: level, keep: { frames.append($0) })
        var stream = z_stream()
        _ = czlib_inflateInit2(&stream, -15)
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 20)
        for (frame, chunk) in zip(frames, data.chunks) {
            guard frame.suffix(4) == [0, 0, 0xFF, 0xFF] else { return false }
            var input = frame
            let produced = input.withUnsafeMutableBufferPointer { inBuffer in
                output.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_in = inBuffer.baseAddress
                    stream.avail_in = uInt(inBuffer.count)
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    _ = inflate(&stream, Z_SYNC_FLUSH)
                    return outBuffer.count - Int(stream.avail_out)
                }
            }
            guard output.prefix(produced).elementsEqual(chunk.readableBytesView) else { return false }
        }
        return frames.count == data.chunks.count
    }

    private static func isalDeflate(_ data: BenchData, level: UInt32, keep: (([UInt8]) -> Void)?) -> Int {
        let stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        defer { stream.deallocate() }
        isal_deflate_init(stream)
        // Large enough for every level's default buffer (level 3 needs 340 KiB).
        var levelBuffer = [UInt8](repeating: 0, count: 512 * 1024)
        var crc: UInt32 = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        levelBuffer.withUnsafeMutableBufferPointer { buffer in
            stream.pointee.level = level
            stream.pointee.level_buf = level > 0 ? buffer.baseAddress : nil
            stream.pointee.level_buf_size = level > 0 ? UInt32(buffer.count) : 0
            stream.pointee.flush = UInt16(SYNC_FLUSH)
            stream.pointee.end_of_stream = 0
            for chunk in data.chunks {
                chunk.withUnsafeReadableBytes { input in
                    crc = CRC32.update(crc, input, using: .isal)
                    guard data.workload.compressed else { return }
                    output.withUnsafeMutableBytes { out in
                        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        stream.pointee.avail_in = UInt32(input.count)
                        stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        stream.pointee.avail_out = UInt32(out.count)
                        _ = isal_deflate(stream)
                        let produced = out.count - Int(stream.pointee.avail_out)
                        total += produced - 4
                        keep?(Array(out[..<produced]))
                    }
                }
            }
        }
        return total
    }

    /// CRC-32 over every chunk with `library`.
    static func crc(_ data: BenchData, using library: DecodeLibrary) -> UInt32 {
        var crc: UInt32 = 0
        for chunk in data.chunks { chunk.withUnsafeReadableBytes { crc = CRC32.update(crc, $0, using: library) } }
        return crc
    }

    private static let trailer: [UInt8] = [0, 0, 0xFF, 0xFF]
}
