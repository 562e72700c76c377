#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library that inflates and checksums received frames: Intel ISA-L by default, zlib for
/// comparison. Both produce the same bytes and the same CRC-32 for every valid raw-deflate
/// stream; ISA-L does it several times faster. Deflating (re-encoding) always uses zlib.
public enum DecodeLibrary: String, Sendable, CaseIterable {
    case isal
    case zlib

    /// The environment variable that picks the library for a whole process (`zlib` or `isal`),
    /// read once; anything else, or nothing, means ISA-L. For benchmarks and comparisons only.
    public static let environmentVariable = "BLIPSCOPE_DECODE_LIBRARY"

    /// The library every codec uses unless told otherwise.
    public static let selected: DecodeLibrary = {
        guard let value = getenv(environmentVariable) else { return .isal }
        return DecodeLibrary(rawValue: String(cString: value).lowercased()) ?? .isal
    }()
}
