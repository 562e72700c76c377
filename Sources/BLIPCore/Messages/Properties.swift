import NIOCore

/// A message's properties: ordered key/value strings (wire-format reference §2.3).
///
/// Encoded as `uvarint(P)` then P bytes of `key\0value\0…`. There is no token table in BLIP 3.
/// Order is kept as received (go-blip sends them in random order, so never depend on it).
public struct Properties: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    public private(set) var pairs: [(key: String, value: String)]

    public init() { pairs = [] }
    public init(_ pairs: [(String, String)]) { self.pairs = pairs.map { (key: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public static func == (lhs: Properties, rhs: Properties) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }

    /// The value of `key`, or nil. Setting replaces the first pair with that key or appends one.
    public subscript(key: String) -> String? {
        get { pairs.first { $0.key == key }?.value }
        set {
            if let index = pairs.firstIndex(where: { $0.key == key }) {
                if let newValue { pairs[index].value = newValue } else { pairs.remove(at: index) }
            } else if let newValue {
                pairs.append((key: key, value: newValue))
            }
        }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public func makeIterator() -> IndexingIterator<[(key: String, value: String)]> { pairs.makeIterator() }

    /// The `Profile` property: the request's kind (§2.3).
    public var profile: String? { self["Profile"] }

    public var description: String { pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }

    /// The size of the encoded block, without the length varint.
    public var encodedSize: Int { pairs.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 } }

    /// Appends `uvarint(P)` and the block to `buffer`. Keys and values must not contain NUL.
    public func encode(into buffer: inout ByteBuffer) {
        Varint.write(UInt64(encodedSize), to: &buffer)
        for pair in pairs {
            precondition(!pair.key.utf8.contains(0) && !pair.value.utf8.contains(0),
                         "BLIP property strings cannot contain NUL")
            buffer.writeString(pair.key)
            buffer.writeInteger(UInt8(0))
            buffer.writeString(pair.value)
            buffer.writeInteger(UInt8(0))
        }
    }

    /// Decodes a properties block (without its length varint), with every check of §2.3:
    /// a non-empty block ends with NUL, holds an even number of strings and no duplicate key.
    /// UTF-8 is not validated (no peer does); invalid sequences are shown repaired.
    public static func decode(block bytes: UnsafeRawBufferPointer) throws(BLIPError) -> Properties {
        var properties = Properties()
        guard !bytes.isEmpty else { return properties }
        guard bytes[bytes.count - 1] == 0 else {
            throw BLIPError(.propertiesNotTerminated, "properties are not NUL-terminated")
        }
        var strings: [String] = []
        var start = 0
        for index in 0..<bytes.count where bytes[index] == 0 {
            strings.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
            start = index + 1
        }
        guard strings.count % 2 == 0 else {
            throw BLIPError(.propertiesOddCount, "properties hold an odd number of strings (\(strings.count))")
        }
        properties.pairs.reserveCapacity(strings.count / 2)
        var index = 0
        while index < strings.count {
            let key = strings[index]
            if properties.pairs.contains(where: { $0.key == key }) {
                throw BLIPError(.propertiesDuplicateKey, "property \"\(key)\" appears twice")
            }
            properties.pairs.append((key: key, value: strings[index + 1]))
            index += 2
        }
        return properties
    }

    /// Decodes `uvarint(P)` and the block from the front of `buffer` (moving its reader index).
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
        var result = Properties()
        var failure: BLIPError?
        block.withUnsafeReadableBytes { bytes in
            do { result = try decode(block: bytes) } catch let error as BLIPError { failure = error } catch {}
        }
        if let failure { throw failure }
        return result
    }
}
