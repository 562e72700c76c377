import Testing
@testable import Replication

@Suite("Line writer")
struct LineWriterTests {
    @Test("decimals are written as String(_:) writes them", arguments: [
        0, 7, 10, 99, 300, 999, 1000, 65_535, -1, -300, Int.max, Int.min,
    ])
    func decimals(_ value: Int) {
        #expect(LineWriter.text(capacity: 24) { $0.append(decimal: value) } == String(value))
        let unsigned = UInt64(bitPattern: Int64(value))
        #expect(LineWriter.text(capacity: 24) { $0.append(decimal: unsigned) } == String(unsigned))
    }

    @Test("byte counts are written as ByteCount.format writes them, which is unchanged below 1000")
    func byteCounts() {
        for bytes in [0, 1, 58, 300, 999, 1000, 1234, 999_949, 999_950, 3_400_000, -5, Int.max, Int.min] {
            let text = LineWriter.text(capacity: ByteCount.maxLength) { $0.append(byteCount: bytes) }
            #expect(text == ByteCount.format(bytes))
            #expect(text.utf8.count <= ByteCount.maxLength)
            if bytes < 1000 { #expect(text == "\(bytes) B") }
        }
        #expect(ByteCount.format(1234) == "1.2 KB" && ByteCount.format(3_400_000) == "3.4 MB")
    }

    @Test("pieces are joined in order, short lines and long, ASCII or not")
    func pieces() {
        let short = LineWriter.text(capacity: 15) { line in
            line.append("echo")
            line.append(" (")
            line.append(byteCount: 300)
            line.append(")")
        }
        #expect(short == "echo (300 B)")
        let name = String(repeating: "é", count: 40)
        let long = LineWriter.text(capacity: name.utf8.count + 40) { line in
            line.append(name)
            line.append(" → ")
            line.append(decimal: 12)
        }
        #expect(long == name + " → 12")
    }
}
