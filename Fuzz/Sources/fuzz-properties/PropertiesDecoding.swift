import BLIPCore
import FuzzSupport
import NIOCore

/// ``Properties/decode(from:maxSize:)``: `uvarint(P) || key\0value\0…` from a message stream.
///
/// Input: a byte choosing the size limit, then the stream. What decodes must read back the same
/// way through every accessor, and encode to a block that decodes to the same pairs; the bytes
/// after it are the body, untouched.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let maxSizes = [BLIPLimits.default.maxPropertiesSize, 0, 1, 16, 255, 4096]
    let maxSize = maxSizes[Int(input.byte()) % maxSizes.count]
    let stream = input.rest()
    var buffer = ByteBuffer(fuzzBytes: stream)
    let properties: Properties
    do {
        properties = try Properties.decode(from: &buffer, maxSize: maxSize)
    } catch {
        return 0
    }
    fuzzCheck(properties.encodedSize <= maxSize, "a block over the limit was accepted")
    fuzzCheck(Array(buffer.readableBytesView) == Array(stream.suffix(buffer.readableBytes)), "the body moved")

    let pairs = properties.pairs
    fuzzCheck(pairs.count == properties.count, "count \(properties.count), \(pairs.count) pairs")
    fuzzCheck(Set(pairs.map(\.key)).count <= pairs.count, "impossible")
    var raw: [(key: [UInt8], value: [UInt8])] = []
    properties.forEachRawPair { key, value in
        raw.append((Array(key), Array(value)))
        return true
    }
    fuzzCheck(raw.count == pairs.count, "forEachRawPair saw \(raw.count) pairs")
    for (index, pair) in pairs.enumerated() {
        fuzzCheck(pair.key == String(decoding: raw[index].key, as: UTF8.self), "key \(index) differs")
        fuzzCheck(pair.value == String(decoding: raw[index].value, as: UTF8.self), "value \(index) differs")
        // Lookups compare bytes: only a key that is valid UTF-8 can be looked up by its String,
        // and two keys may read the same once invalid UTF-8 is repaired.
        if Array(pair.key.utf8) == raw[index].key, pairs.firstIndex(where: { $0.key == pair.key }) == index {
            fuzzCheck(properties[pair.key] == pair.value, "subscript of key \(index)")
        }
    }
    _ = properties.description
    _ = properties.profile

    // Encoding writes the block as received; decoding that gives the same pairs.
    var encoded = ByteBuffer()
    properties.encode(into: &encoded)
    let consumed = stream.count - buffer.readableBytes
    fuzzCheck(encoded.readableBytes <= consumed, "the re-encoded block is longer than the one read")
    do {
        let again = try Properties.decode(from: &encoded, maxSize: maxSize)
        fuzzCheck(again == properties, "properties changed in a round trip")
        fuzzCheck(encoded.readableBytes == 0, "the round trip left bytes")
    } catch {
        fuzzCheck(false, "re-encoded properties do not decode: \(error)")
    }

    // Setting a property switches to pairs; the result still encodes and decodes.
    var edited = properties
    edited["Profile"] = "fuzz"
    if let first = pairs.first, !first.key.utf8.contains(0) { edited[first.key] = nil }
    var editedBlock = ByteBuffer()
    edited.encode(into: &editedBlock)
    do {
        let again = try Properties.decode(from: &editedBlock, maxSize: .max)
        fuzzCheck(again.count == edited.count, "edited properties lost pairs")
    } catch where error.code == .propertiesDuplicateKey {
        // Two keys that differ only in invalid UTF-8 become equal Strings once repaired.
    } catch {
        fuzzCheck(false, "edited properties do not decode: \(error)")
    }
    return 0
}
