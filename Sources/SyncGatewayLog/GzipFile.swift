import CZlib

/// Decompresses a whole gzip file (Sync Gateway's rotated logs, `sg_info-….log.gz`) with zlib,
/// members one after another, up to a limit.
enum GzipFile {
    struct Failure: Error { var reason: String }

    static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        var stream = z_stream()
        // 16 + 15: a gzip header and trailer around a 32 KiB-window deflate stream.
        guard czlib_inflateInit2(&stream, 16 + 15) == Z_OK else { throw Failure(reason: "zlib would not start") }
        defer { inflateEnd(&stream) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var consumed = 0
        while consumed < input.count {
            let status: Int32 = input.withUnsafeBufferPointer { source in
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress! + consumed)
                    stream.avail_in = UInt32(input.count - consumed)
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    consumed = input.count - Int(stream.avail_in)
                    return status
                }
            }
            output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            guard output.count <= limit else { throw Failure(reason: "larger than \(limit) bytes decompressed") }
            switch status {
            case Z_OK: continue
            case Z_STREAM_END:
                // Another member may follow (concatenated gzip files).
                guard consumed < input.count else { return output }
                guard inflateReset(&stream) == Z_OK else { throw Failure(reason: "zlib would not restart") }
            case Z_BUF_ERROR where stream.avail_in == 0:
                throw Failure(reason: "truncated")
            default:
                throw Failure(reason: stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")
            }
        }
        throw Failure(reason: "truncated")
    }
}
