import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

@Suite("Varints (wire-format §4.1)")
struct VarintTests {
    @Test("known encodings are minimal and read back", arguments: [
        (UInt64(0), "00"), (127, "7f"), (128, "8001"), (300, "ac02"), (16384, "808001"),
        (UInt64(UInt32.max), "ffffffff0f"), (UInt64.max, "ffffffffffffffffff01"),
    ])
    func knownEncodings(value: UInt64, hex: String) throws {
        var buffer = ByteBuffer()
        let written = Varint.write(value, to: &buffer)
        #expect(hexString(buffer) == hex)
        #expect(written == Varint.encodedLength(value))
        #expect(try Varint.read(from: &buffer) == value)
        #expect(buffer.readableBytes == 0)
    }

    @Test("non-minimal encodings are accepted, as LiteCore and Go accept them")
    func nonMinimal() throws {
        var zero = hexBuffer("80 00")
        #expect(try Varint.read(from: &zero) == 0)
        var one = hexBuffer("81 80 80 00")
        #expect(try Varint.read(from: &one) == 1)
    }

    @Test("truncated, over-long and overflowing varints are rejected", arguments: [
        ("", BLIPError.Code.truncatedVarint),
        ("80", .truncatedVarint),
        ("ff ff", .truncatedVarint),
        ("80 80 80 80 80 80 80 80 80 80 00", .overlongVarint),
        ("ff ff ff ff ff ff ff ff ff 02", .overlongVarint),
    ])
    func rejected(hex: String, code: BLIPError.Code) {
        var buffer = hexBuffer(hex)
        #expect { try Varint.read(from: &buffer) } throws: { ($0 as? BLIPError)?.code == code }
    }

    @Test("random values round-trip")
    func randomRoundTrip() throws {
        var random = SeededRandom(seed: 7)
        for _ in 0..<2000 {
            let value = random.next() >> (random.next() % 64)
            var buffer = ByteBuffer()
            Varint.write(value, to: &buffer)
            #expect(try Varint.read(from: &buffer) == value)
        }
    }
}
