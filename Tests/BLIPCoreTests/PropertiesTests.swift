import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

@Suite("Properties (wire-format §2.3)")
struct PropertiesTests {
    @Test("go-blip's vector: two sorted properties behind a 0x2E length")
    func goBlipVector() throws {
        var buffer = ByteBuffer()
        Properties([("Content-Type", "application/octet-stream"), ("Foo", "Bar")]).encode(into: &buffer)
        #expect(hexString(buffer) == hexString(hexBuffer("2e \"Content-Type\" 00 \"application/octet-stream\" 00 \"Foo\" 00 \"Bar\" 00")))
        let decoded = try Properties.decode(from: &buffer)
        #expect(decoded["Foo"] == "Bar")
        #expect(decoded["Content-Type"] == "application/octet-stream")
    }

    @Test("forEachRawPair visits every pair in order, decoded or built, and stops when asked")
    func rawPairs() throws {
        let built = Properties([("Profile", "rev"), ("id", "doc-é"), ("", "empty key")])
        var buffer = ByteBuffer()
        built.encode(into: &buffer)
        let decoded = try Properties.decode(from: &buffer)
        for properties in [built, decoded] {
            var seen: [String] = []
            properties.forEachRawPair { key, value in
                seen.append(String(decoding: key, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                return true
            }
            #expect(seen == ["Profile=rev", "id=doc-é", "=empty key"])
            var visited = 0
            properties.forEachRawPair { _, _ in
                visited += 1
                return visited < 2
            }
            #expect(visited == 2)
        }
    }

    @Test("encoded into bytes, built or decoded, they are the bytes encode(into:) writes, a two-byte length included")
    func encodedIntoBytes() throws {
        let built = Properties([("Profile", "rev"), ("id", String(repeating: "d", count: 200))])
        var buffer = ByteBuffer()
        built.encode(into: &buffer)
        var bytes: [UInt8] = [9]
        built.encode(appendingTo: &bytes)
        #expect(bytes == [9] + Array(buffer.readableBytesView))
        #expect(bytes[1] & 0x80 != 0, "a block over 127 bytes has a two-byte length")
        var copy = buffer
        let decoded = try Properties.decode(from: &copy)
        var again: [UInt8] = []
        decoded.encode(appendingTo: &again)
        #expect(again == Array(buffer.readableBytesView))
    }

    @Test("empty properties are the single byte 00")
    func empty() throws {
        var buffer = ByteBuffer()
        Properties().encode(into: &buffer)
        #expect(hexString(buffer) == "00")
        #expect(try Properties.decode(from: &buffer).isEmpty)
    }

    @Test("empty keys and values are legal")
    func emptyStrings() throws {
        var buffer = hexBuffer("03 00 \"a\" 00")
        let decoded = try Properties.decode(from: &buffer)
        #expect(decoded.pairs.count == 1)
        #expect(decoded[""] == "a")
    }

    @Test("malformed blocks are rejected with the reason", arguments: [
        ("", BLIPError.Code.truncatedVarint),
        ("05 \"ab\" 00", .propertiesTruncated),
        ("02 \"hi\"", .propertiesNotTerminated),
        ("02 \"h\" 00", .propertiesOddCount),
        ("08 \"a\" 00 \"1\" 00 \"a\" 00 \"2\" 00", .propertiesDuplicateKey),
    ])
    func malformed(hex: String, code: BLIPError.Code) {
        var buffer = hexBuffer(hex)
        #expect { try Properties.decode(from: &buffer) } throws: { ($0 as? BLIPError)?.code == code }
    }

    /// A block of `count` pairs `k0=v, k1=v, …`, with key `duplicateOf` repeated as the last key
    /// when given, and its decoding.
    private func block(keys count: Int, repeating duplicateOf: Int? = nil) -> Result<Properties, BLIPError> {
        var bytes: [UInt8] = []
        for index in 0..<count { bytes += Array("k\(index)\0v\0".utf8) }
        if let duplicateOf { bytes += Array("k\(duplicateOf)\0w\0".utf8) }
        var buffer = ByteBuffer()
        Varint.write(UInt64(bytes.count), to: &buffer)
        buffer.writeBytes(bytes)
        return Result { () throws(BLIPError) in try Properties.decode(from: &buffer) }
    }

    @Test("a repeated key is found however many keys come before it", arguments: [1, 2, 15, 16, 17, 40])
    func duplicateAmongMany(count: Int) throws {
        // Every key is checked against every earlier one: the first, the last and one in the middle.
        for repeated in Set([0, count / 2, count - 1]) {
            guard case .failure(let error) = block(keys: count, repeating: repeated) else {
                Issue.record("k\(repeated) twice among \(count + 1) keys was accepted")
                continue
            }
            #expect(error.code == .propertiesDuplicateKey)
            #expect(error.description.contains("\"k\(repeated)\""))
        }
        // The same keys without the repeat are fine, pairs counted.
        #expect(try block(keys: count).get().pairs.count == count)
    }

    @Test("keys of the same length that differ are not duplicates")
    func sameLengthKeys() throws {
        var buffer = hexBuffer("0a \"ab\" 00 \"1\" 00 \"ac\" 00 \"2\" 00")
        let decoded = try Properties.decode(from: &buffer)
        #expect(decoded["ab"] == "1")
        #expect(decoded["ac"] == "2")
    }

    @Test("a block over the cap is refused before it arrives")
    func cap() {
        var buffer = ByteBuffer()
        Varint.write(100 * 1024 + 1, to: &buffer)
        #expect { try Properties.decode(from: &buffer) } throws: { ($0 as? BLIPError)?.code == .propertiesTooLarge }
        var small = hexBuffer("04 \"a\" 00 \"b\" 00")
        #expect { try Properties.decode(from: &small, maxSize: 3) } throws: { ($0 as? BLIPError)?.code == .propertiesTooLarge }
    }
}
