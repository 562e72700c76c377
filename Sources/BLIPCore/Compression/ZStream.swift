import CZlib

/// A heap-allocated `z_stream` (zlib keeps pointers into it, so it must not move), set up by
/// one of zlib's init calls; ``ZlibInflater`` and ``RawDeflater`` own one each.
enum ZStream {
    /// A new stream initialized by `initialize` (`inflateInit2`, `deflateInit2`, `deflateCopy`…);
    /// throws `code` naming `call` when zlib refuses, leaving nothing allocated.
    static func make(_ call: String, code: BLIPError.Code,
                     _ initialize: (UnsafeMutablePointer<z_stream>) -> Int32) throws(BLIPError) -> UnsafeMutablePointer<z_stream> {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = initialize(stream)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw BLIPError(code, "\(call) failed with zlib status \(status)")
        }
        return stream
    }

    /// Frees a stream from ``make(_:code:_:)`` after its `inflateEnd` or `deflateEnd`.
    static func free(_ stream: UnsafeMutablePointer<z_stream>) {
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
}
