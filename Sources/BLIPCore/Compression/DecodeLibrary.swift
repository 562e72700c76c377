#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library that inflates and checksums received frames: Intel ISA-L by default, zlib for
/// comparison. Both produce the same bytes and the same CRC-32 for every valid raw-deflate
/// stream. Deflating (re-encoding) always uses zlib.
public enum DecodeLibrary: String, Sendable, CaseIterable {
    /// ISA-L's CRC-32, and its inflater for large frames (``AdaptiveInflater``): about twice zlib's
    /// speed on 16 KiB frames, but each call saves 32 KiB of history, which costs more than zlib's
    /// whole inflate of a frame of a few hundred bytes, so small frames go through zlib.
    case isal
    /// ISA-L for every frame (for comparison).
    case isalOnly = "isal-only"
    /// zlib for every frame and its CRC-32 (for comparison).
    case zlib

    /// The environment variable that picks the library for a whole process (`zlib`, `isal-only`
    /// or `isal`), read once; anything else, or nothing, means `isal`. For benchmarks and
    /// comparisons only.
    public static let environmentVariable = "BLIPSCOPE_DECODE_LIBRARY"

    /// The library every codec uses unless told otherwise.
    public static let selected: DecodeLibrary = {
        guard let value = getenv(environmentVariable) else { return .isal }
        return DecodeLibrary(rawValue: String(cString: value).lowercased()) ?? .isal
    }()
}
