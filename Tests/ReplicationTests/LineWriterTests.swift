import Testing
@testable import Replication

@Suite("Line writer")
struct LineWriterTests {
    @Test("decimals are written as String(_:) writes them", arguments: [
        0, 7, 10, 99, 300, 999, 1000, 65_535, -1, -300, Int.max, Int.min,
    ])
    func decimals(_ value: Int) {
        #expect(LineWriter.text { $0.append(decimal: value) } == String(value))
        let unsigned = UInt64(bitPattern: Int64(value))
        #expect(LineWriter.text { $0.append(decimal: unsigned) } == String(unsigned))
    }

    @Test("every digit count, on both sides of each power of ten, is written as String(_:) writes it")
    func decimalDigitsAtEveryLength() {
        var values: [UInt] = [0, UInt.max, UInt.max - 1]
        var power: UInt = 1
        for _ in 0..<20 {
            values += [power - 1, power, power + 1, power &* 7 &+ 3]
            if power > UInt.max / 10 { break }
            power *= 10
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            for value in values {
                let written = DecimalDigits.write(value, to: buffer.baseAddress!)
                #expect(written == DecimalDigits.count(value))
                #expect(String(decoding: UnsafeBufferPointer(rebasing: buffer[..<written]), as: UTF8.self) == String(value))
            }
        }
        // Two digits, zero-padded; a value out of range reads as 99, never past the table.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2) { buffer in
            for value in [0, 7, 10, 99, -1, 100, Int.min, Int.max] {
                DecimalDigits.writeTwo(value, to: buffer.baseAddress!)
                let expected = (0...99).contains(value) ? (value < 10 ? "0\(value)" : "\(value)") : "99"
                #expect(String(decoding: buffer, as: UTF8.self) == expected, "\(value)")
            }
        }
        // A line whose last piece is a number ending exactly at the stack buffer, or one past it.
        for pad in [LineWriter.stackCapacity - 3, LineWriter.stackCapacity - 2] {
            let text = LineWriter.text { line in
                line.append(String(repeating: "x", count: pad))
                line.append(decimal: 123)
            }
            #expect(text == String(repeating: "x", count: pad) + "123")
        }
    }

    @Test("byte counts are written as ByteCount.format writes them, which is unchanged below 1000")
    func byteCounts() {
        for bytes in [0, 1, 58, 300, 999, 1000, 1234, 999_949, 999_950, 3_400_000, -5, Int.max, Int.min] {
            let text = LineWriter.text { $0.append(byteCount: bytes) }
            #expect(text == ByteCount.format(bytes))
            if bytes < 1000 { #expect(text == "\(bytes) B") }
        }
        #expect(ByteCount.format(1234) == "1.2 KB" && ByteCount.format(3_400_000) == "3.4 MB")
    }

    @Test("pieces are joined in order, short lines and long, ASCII or not")
    func pieces() {
        let short = LineWriter.text { line in
            line.append("echo")
            line.append(" (")
            line.append(byteCount: 300)
            line.append(")")
        }
        #expect(short == "echo (300 B)")
        let name = String(repeating: "é", count: 40)
        let long = LineWriter.text { line in
            line.append(name)
            line.append(" → ")
            line.append(decimal: 12)
        }
        #expect(long == name + " → 12")
    }

    @Test("a line longer than the stack buffer is measured, then written whole", arguments: [
        LineWriter.stackCapacity - 1, LineWriter.stackCapacity, LineWriter.stackCapacity + 1, 5000,
    ])
    func longLines(_ length: Int) {
        let docID = String(repeating: "d", count: length - 4)
        let line = LineWriter.text { line in
            line.append(docID[...])
            line.append(" ")
            line.append(decimal: 12)
            line.append("…")
        }
        #expect(line.utf8.count == length + 2 && line == docID + " 12…")
    }
}

@Suite("Abbreviations written by the line writer")
struct AbbreviationTests {
    @Test("hex cut to a number of digits, as String(_:radix:) then prefix")
    func hex() {
        for value: UInt64 in [0, 0xa, 0xff, 0x17a3, 0x17a3b, 0x17a3_b2c4_d5e6_f708, .max] {
            for digits in [1, 4, 16] {
                let text = LineWriter.text { $0.append(hex: value, maxDigits: digits) }
                #expect(text == String(String(value, radix: 16).prefix(digits)))
            }
        }
    }

    @Test("rev-tree and version-vector IDs abbreviate as the interpolations did")
    func revIDs() throws {
        for text in [revA1, revA2, revA3, "123456789012-0123456789abcdef0123456789abcdef"] {
            guard case .success(let id) = TreeRevID.parse(text) else { throw ParseFailure(text: text) }
            #expect(id.abbreviated == "\(id.generation)-\(id.digest.prefix(4))…")
            #expect(RevID.abbreviate(text) == id.abbreviated)
        }
        for text in ["17a3b2c4d5e6f708@Zm9vYmFyYmF6cXV4cXV1eA", "0@AAAAAAAAAAAAAAAAAAAAAA", "a@Zm9vYmFyYmF6cXV4cXV1eA"] {
            guard case .success(let version) = Version.parse(Substring(text)) else { throw ParseFailure(text: text) }
            let time = String(version.timestamp, radix: 16)
            #expect(version.abbreviated == "\(time.prefix(4))…@\(version.sourceID.prefix(4))…")
        }
        #expect(RevID.abbreviate("not a rev ID at all, really") == "not a rev ID…")
        #expect(RevID.abbreviate("short") == "short")
    }

    struct ParseFailure: Error { var text: String }
}
