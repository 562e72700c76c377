import BLIPCore

/// Reads one message's properties block as its frames arrive (it may span frames, wire-format
/// reference §2.2) and finds the bytes of secret values (``PropertyRedaction/isSecret(_:)``),
/// keeping only the current key: no frame is held and nothing is joined.
///
/// The block is `uvarint(P)` then P bytes of `key\0value\0…` (§2.3); the scanner stops at its
/// end (the body is never read). A key longer than ``maxKeyLength`` counts as secret.
///
/// How a secret value is masked is decided at the first chunk that holds any of its bytes, since
/// no chunk is held for later: the marker (`<redacted>` then `*`) when that chunk holds at least
/// the marker's length of the value, all `*` otherwise, which covers a value shorter than the
/// marker and one whose first bytes a frame boundary splits. Either way every byte of the value
/// is replaced and its length kept.
struct PropertyScanner {
    /// How a secret value's bytes are replaced.
    enum Mask: Equatable {
        /// `<redacted>` then `*`: the value's first chunk holds the whole marker.
        case marker
        /// Every byte `*`.
        case stars
    }

    /// A run of secret value bytes inside one chunk.
    struct Span: Equatable {
        /// Positions in the chunk.
        var range: Range<Int>
        /// Position of the run's first byte within its value.
        var valueOffset: Int
        /// How the value is masked (the same for all its runs).
        var mask: Mask
    }

    enum Failure: Error, Equatable {
        case lengthTooLarge(UInt64)
        case badLength
    }

    private enum Phase { case length, key, value, done }

    static let maxKeyLength = 1024

    let maxPropertiesSize: Int
    private var phase = Phase.length
    private var length: UInt64 = 0
    private var shift: UInt64 = 0
    /// Properties bytes not read yet.
    private var remaining = 0
    private var key: [UInt8] = []
    private var secret = false
    private var valueOffset = 0
    private var valueMask = Mask.marker

    init(maxPropertiesSize: Int) { self.maxPropertiesSize = maxPropertiesSize }

    /// The properties block was read to its end.
    var isDone: Bool { phase == .done }

    /// Reads `chunk` (the next slice of the message stream) and appends the secret runs it holds.
    mutating func scan(_ chunk: UnsafeRawBufferPointer, into spans: inout [Span]) throws(Failure) {
        var index = 0
        while index < chunk.count {
            switch phase {
            case .done:
                return
            case .length:
                let byte = chunk[index]
                index += 1
                guard shift < 63 else { throw .badLength }
                length |= UInt64(byte & 0x7F) << shift
                shift += 7
                guard byte & 0x80 == 0 else { continue }
                guard length <= UInt64(maxPropertiesSize) else { throw .lengthTooLarge(length) }
                remaining = Int(length)
                phase = remaining == 0 ? .done : .key
                key.removeAll(keepingCapacity: true)
            case .key:
                let end = min(chunk.count, index + remaining)
                guard let nul = (index..<end).first(where: { chunk[$0] == 0 }) else {
                    appendKey(UnsafeRawBufferPointer(rebasing: chunk[index..<end]))
                    remaining -= end - index
                    index = end
                    if remaining == 0 { phase = .done }
                    continue
                }
                appendKey(UnsafeRawBufferPointer(rebasing: chunk[index..<nul]))
                secret = key.count > Self.maxKeyLength || key.withUnsafeBytes { PropertyRedaction.isSecret($0) }
                key.removeAll(keepingCapacity: true)
                remaining -= nul + 1 - index
                index = nul + 1
                valueOffset = 0
                phase = remaining == 0 ? .done : .value
            case .value:
                let end = min(chunk.count, index + remaining)
                let nul = (index..<end).first(where: { chunk[$0] == 0 })
                let stop = nul ?? end
                if secret, stop > index {
                    if valueOffset == 0 { valueMask = stop - index < Self.marker.count ? .stars : .marker }
                    spans.append(Span(range: index..<stop, valueOffset: valueOffset, mask: valueMask))
                }
                valueOffset += stop - index
                remaining -= (nul.map { $0 + 1 } ?? end) - index
                index = nul.map { $0 + 1 } ?? end
                if remaining == 0 { phase = .done } else if nul != nil { phase = .key }
            }
        }
    }

    private mutating func appendKey(_ bytes: UnsafeRawBufferPointer) {
        // Past the bound only the length matters (the key is secret then).
        guard key.count <= Self.maxKeyLength else { return }
        key.append(contentsOf: bytes.prefix(Self.maxKeyLength + 1 - key.count))
    }

    /// What the secret value byte at `offset` becomes under `mask`; the value keeps its length
    /// (and the frame its shape).
    static func maskByte(at offset: Int, mask: Mask) -> UInt8 {
        switch mask {
        case .marker: return offset < marker.count ? marker[offset] : star
        case .stars: return star
        }
    }

    private static let marker = Array(PropertyRedaction.placeholder.utf8)
    private static let star = UInt8(ascii: "*")
}
