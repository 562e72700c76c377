#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import ReplicationNames

/// A message's properties: ordered key/value strings (wire-format reference §2.3).
///
/// Encoded as `uvarint(P)` then P bytes of `key\0value\0…`. There is no token table in BLIP 3.
/// Order is kept as received (go-blip sends them in random order, so never depend on it).
///
/// Decoded properties keep the validated block as received (a slice, no copy) and read keys and
/// values from it on demand, so decoding a message allocates nothing for its properties, and
/// forwarding them re-encodes the exact bytes. Setting a property switches to a list of pairs.
public struct Properties: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    public typealias Pair = (key: String, value: String)

    private enum Storage: Sendable {
        /// A validated block (NUL-terminated strings, even count, no duplicate key) and its pair count.
        case block(ByteBuffer, count: Int)
        case pairs([Pair])
    }

    private var storage: Storage

    public init() { storage = .pairs([]) }
    /// Properties from pairs. Keys and values must not contain NUL (a precondition: a NUL would
    /// corrupt the block's framing).
    public init(_ pairs: [(String, String)]) {
        for (key, value) in pairs { Self.checkNoNUL(key, value) }
        storage = .pairs(pairs.map { (key: $0.0, value: $0.1) })
    }

    private static func checkNoNUL(_ key: String, _ value: String) {
        precondition(!key.utf8.contains(0) && !value.utf8.contains(0), "BLIP property strings cannot contain NUL")
    }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public static func == (lhs: Properties, rhs: Properties) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }

    /// The pairs in order.
    public var pairs: [Pair] {
        switch storage {
        case .pairs(let pairs):
            return pairs
        case .block(let block, let count):
            var result: [Pair] = []
            result.reserveCapacity(count)
            Self.forEachPair(in: block) { key, value in
                result.append((key: String(decoding: key, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
                return true
            }
            return result
        }
    }

    /// The value of `key`, or nil. Setting replaces the first pair with that key or appends one.
    public subscript(key: String) -> String? {
        get {
            switch storage {
            case .pairs(let pairs):
                return pairs.first { $0.key == key }?.value
            case .block(let block, _):
                var found: String?
                var wanted = key
                wanted.withUTF8 { wantedKey in
                    Self.forEachPair(in: block) { candidate, value in
                        guard candidate.elementsEqual(UnsafeRawBufferPointer(wantedKey)) else { return true }
                        found = String(decoding: value, as: UTF8.self)
                        return false
                    }
                }
                return found
            }
        }
        set {
            Self.checkNoNUL(key, newValue ?? "")
            var list = pairs
            if let index = list.firstIndex(where: { $0.key == key }) {
                if let newValue { list[index].value = newValue } else { list.remove(at: index) }
            } else if let newValue {
                list.append((key: key, value: newValue))
            }
            storage = .pairs(list)
        }
    }

    public var count: Int {
        switch storage {
        case .pairs(let pairs): return pairs.count
        case .block(_, let count): return count
        }
    }

    public var isEmpty: Bool { count == 0 }
    public func makeIterator() -> IndexingIterator<[Pair]> { pairs.makeIterator() }

    /// Calls `body` with each key and value as UTF-8 bytes (NULs excluded), in order, until it
    /// returns false. Makes no String: for readers that want several properties of a message in
    /// one pass instead of one scan of the block per subscript. The buffers are valid only
    /// during the call.
    public func forEachRawPair(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        switch storage {
        case .block(let block, _):
            Self.forEachPair(in: block, body)
        case .pairs(let pairs):
            for pair in pairs {
                var key = pair.key
                var value = pair.value
                let goOn = key.withUTF8 { keyBytes in
                    value.withUTF8 { valueBytes in body(UnsafeRawBufferPointer(keyBytes), UnsafeRawBufferPointer(valueBytes)) }
                }
                if !goOn { return }
            }
        }
    }

    /// The `Profile` property: the request's kind (§2.3).
    public var profile: String? { self[.profile] }

    public var description: String { pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }

    /// The size of the encoded block, without the length varint.
    public var encodedSize: Int {
        switch storage {
        case .pairs(let pairs): return pairs.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 }
        case .block(let block, _): return block.readableBytes
        }
    }

    /// Appends `uvarint(P)` and the block to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        Varint.write(UInt64(encodedSize), to: &buffer)
        switch storage {
        case .block(let block, _):
            buffer.writeImmutableBuffer(block)
        case .pairs(let pairs):
            for pair in pairs {
                buffer.writeString(pair.key)
                buffer.writeInteger(UInt8(0))
                buffer.writeString(pair.value)
                buffer.writeInteger(UInt8(0))
            }
        }
    }
}

extension Properties {
    /// Appends `uvarint(P)` and the block to `bytes`, as ``encode(into:)`` writes them to a buffer
    /// (a keeper of copies needs no buffer of its own).
    public func encode(appendingTo bytes: inout [UInt8]) {
        Varint.write(UInt64(encodedSize), to: &bytes)
        switch storage {
        case .block(let block, _):
            // Typed, so that the append is one copy rather than a byte at a time.
            block.withUnsafeReadableBytes { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
        case .pairs(let pairs):
            for pair in pairs {
                bytes.append(contentsOf: pair.key.utf8)
                bytes.append(0)
                bytes.append(contentsOf: pair.value.utf8)
                bytes.append(0)
            }
        }
    }

    /// Decodes `uvarint(P)` and the block from the front of `buffer` (moving its reader index),
    /// with every check of §2.3: P within `maxSize`, a non-empty block ends with NUL, holds an even
    /// number of strings and no duplicate key. UTF-8 is not validated (no peer does); invalid
    /// sequences are shown repaired.
    public static func decode(from buffer: inout ByteBuffer,
                              maxSize: Int = BLIPLimits.default.maxPropertiesSize) throws(BLIPError) -> Properties {
        let size = try Varint.read(from: &buffer)
        guard size <= UInt64(maxSize) else {
            throw BLIPError(.propertiesTooLarge, "properties of \(size) bytes exceed the \(maxSize)-byte limit")
        }
        guard buffer.readableBytes >= Int(size) else {
            throw BLIPError(.propertiesTruncated, "properties of \(size) bytes, only \(buffer.readableBytes) present")
        }
        let block = buffer.readSlice(length: Int(size))!
        return try decode(block: block)
    }

    /// Validates a properties block (without its length varint) and wraps it.
    public static func decode(block: ByteBuffer) throws(BLIPError) -> Properties {
        guard block.readableBytes > 0 else { return Properties() }
        let checked: Result<Int, BLIPError> = block.withUnsafeReadableBytes { check($0) }
        return Properties(storage: .block(block, count: try checked.get()))
    }

    private init(storage: Storage) { self.storage = storage }

    /// Keys compared pairwise, kept on the stack while the block is scanned; a block with more
    /// (hostile ones can hold thousands) is checked with a set instead.
    private static let pairwiseKeys = 16

    /// The checks of §2.3 on a non-empty block, in one scan for the NULs: the pair count, or why
    /// the block is invalid. The first ``pairwiseKeys`` keys are noted as they pass and compared
    /// with each other afterwards (lengths first), with no allocation.
    private static func check(_ bytes: UnsafeRawBufferPointer) -> Result<Int, BLIPError> {
        guard let base = bytes.baseAddress, bytes[bytes.count - 1] == 0 else {
            return .failure(BLIPError(.propertiesNotTerminated, "properties are not NUL-terminated"))
        }
        return withUnsafeTemporaryAllocation(of: (start: Int, count: Int).self, capacity: pairwiseKeys) { keys in
            var strings = 0
            var start = 0
            // The block ends with a NUL, so the scan ends on one.
            while start < bytes.count, let nul = memchr(base + start, 0, bytes.count - start) {
                let end = UnsafeRawPointer(nul) - base
                if strings & 1 == 0, strings / 2 < pairwiseKeys { keys[strings / 2] = (start, end - start) }
                strings += 1
                start = end + 1
            }
            guard strings % 2 == 0 else {
                return .failure(BLIPError(.propertiesOddCount, "properties hold an odd number of strings (\(strings))"))
            }
            let pairs = strings / 2
            guard pairs > 1 else { return .success(pairs) }
            guard pairs <= pairwiseKeys else {
                if let duplicate = duplicateKey(in: bytes) { return .failure(duplicate) }
                return .success(pairs)
            }
            for later in 1..<pairs {
                let key = keys[later]
                for earlier in 0..<later where keys[earlier].count == key.count
                    && memcmp(base + keys[earlier].start, base + key.start, key.count) == 0 {
                    return .failure(duplicateError(UnsafeRawBufferPointer(start: base + key.start, count: key.count)))
                }
            }
            return .success(pairs)
        }
    }

    /// A duplicate key among many, found with a set.
    private static func duplicateKey(in bytes: UnsafeRawBufferPointer) -> BLIPError? {
        var seen: Set<[UInt8]> = []
        var duplicate: UnsafeRawBufferPointer?
        forEachPair(in: bytes) { key, _ in
            if !seen.insert(Array(key)).inserted { duplicate = key }
            return duplicate == nil
        }
        return duplicate.map(duplicateError)
    }

    private static func duplicateError(_ key: UnsafeRawBufferPointer) -> BLIPError {
        BLIPError(.propertiesDuplicateKey, "property \"\(String(decoding: key, as: UTF8.self))\" appears twice")
    }

    private static func forEachPair(in block: ByteBuffer,
                                    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) {
        block.withUnsafeReadableBytes { forEachPair(in: $0, body) }
    }

    /// Calls `body` with each key and value (without NULs) until it returns false.
    /// NULs are found with `memchr` (a vector scan), not byte by byte: values such as a `rev`'s
    /// `history` run to hundreds of bytes.
    private static func forEachPair(in bytes: UnsafeRawBufferPointer,
                                    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        var key: UnsafeRawBufferPointer?
        while start < bytes.count, let nul = memchr(base + start, 0, bytes.count - start) {
            let index = UnsafeRawPointer(nul) - base
            let string = UnsafeRawBufferPointer(start: base + start, count: index - start)
            start = index + 1
            if let pendingKey = key {
                key = nil
                if !body(pendingKey, string) { return }
            } else {
                key = string
            }
        }
    }
}
