import BLIPCore
import Foundation
import Testing
@testable import Relay

/// Log lines written byte by byte: numbers, quoting, escapes and long lines, after the timestamp.
@Suite struct LineBuilderTests {
    /// The line after its timestamp (text) or with the timestamp blanked (JSON).
    static func line(json: Bool, event: StaticString? = nil, _ fill: (inout LineBuilder) -> Void) -> String {
        var builder = LineBuilder(json: json, event: event)
        fill(&builder)
        let line = builder.finish()
        let stamp = json ? line.utf8.dropFirst(9).prefix(LogTimestamp.length) : line.utf8.prefix(LogTimestamp.length)
        #expect(String(stamp)!.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/) != nil, "\(line)")
        return json ? line.replacingOccurrences(of: String(stamp)!, with: "T") : String(line.dropFirst(LogTimestamp.length))
    }

    @Test func numbers() {
        let text = Self.line(json: false) { line in
            for value in [0, 9, 10, 99, 100, 314, -1, -10, Int.max, Int.min] { line.int("n", value) }
            for value in [1000, 9999, 10_000, 12_345, 1_000_000_000_000_000_000] { line.int("n", value) }
            line.millis("ms", 0)
            line.millis("ms", 433_000)
            line.millis("ms", 12_345_678_901)
            line.millis("ms", 5_000_000)
        }
        #expect(text == " n=0 n=9 n=10 n=99 n=100 n=314 n=-1 n=-10 n=9223372036854775807 n=-9223372036854775808"
                + " n=1000 n=9999 n=10000 n=12345 n=1000000000000000000"
                + " ms=0.000 ms=0.433 ms=12345.678 ms=5.000")
    }

    /// A peer's value or property name with a newline or ESC cannot fake a log line or drive a
    /// terminal: control characters are escaped in text as in JSON.
    @Test func textEscapesControlCharactersSoLinesCannotBeForged() {
        let forged = "x\n2026-11-24T00:00:00.000000Z event=close session=9\u{1B}[2J"
        let text = Self.line(json: false) { line in
            line.text("db", forged)
            Array("na\nme".utf8).withUnsafeBytes { key in
                Array("v\r".utf8).withUnsafeBytes { value in line.raw(key, value) }
            }
        }
        #expect(!text.contains("\n") && !text.contains("\u{1B}") && !text.contains("\r"), "\(text)")
        #expect(text == #" db="x\n2026-11-24T00:00:00.000000Z event=close session=9\u001b[2J" na\nme="v\r""#)
    }

    /// Words the relay names itself (direction, type) go in as they are: bare in text, in quotes in JSON.
    @Test func wordsAreWrittenAsTheyAre() {
        let text = Self.line(json: false) { line in
            line.word("dir", "C→U")
            line.word("type", "MSG")
            line.word("by", "relay")
            line.word("w", "a-sixteen-bytes!")
            line.word("x", "seventeen-bytes!!")  // past the short-copy path
        }
        #expect(text == " dir=C→U type=MSG by=relay w=a-sixteen-bytes! x=seventeen-bytes!!")
        let json = Self.line(json: true, event: "message") { line in
            line.word("dir", "U→C")
            line.word("type", "RPY")
        }
        #expect(json == #"{"time":"T","event":"message","dir":"U→C","type":"RPY"}"#)
    }

    /// A message line's direction and type, written in one copy, read as the two words would.
    @Test func directionAndTypeReadAsTheirTwoWords() {
        for json in [false, true] {
            for direction in [BLIPDirection.clientToServer, .serverToClient] {
                for type in MessageType.allCases {
                    let together = Self.line(json: json) { $0.directionAndType(direction, type) }
                    let apart = Self.line(json: json) { line in
                        line.word("dir", direction.staticArrow)
                        line.word("type", type.staticDescription)
                    }
                    #expect(together == apart, "\(json ? "JSON" : "text") \(direction) \(type)")
                }
            }
        }
        #expect(Self.line(json: false) { $0.directionAndType(.serverToClient, .error) } == " dir=U→C type=ERR")
    }

    /// A value its lender writes straight into the line (a summary) reads as the same text given as a String:
    /// bare, quoted, escaped, longer than the room first offered, text and JSON.
    @Test func textWrittenIntoTheLineReadsAsTextLent() {
        let values = ["echo", "echo (300 B) → (300 B)", "say \"hi\"", "a\nb", "", "=",
                      String(repeating: "é", count: LineBuilder.lentRoom), String(repeating: "x ", count: 300)]
        for json in [false, true] {
            for value in values {
                var rooms: [Int] = []
                let written = Self.line(json: json) { line in
                    line.int("n", 1)
                    line.text("summary", from: value, writtenBy: { value, buffer in
                        rooms.append(buffer.count)
                        let bytes = Array(value.utf8)
                        if bytes.count <= buffer.count { _ = UnsafeMutableBufferPointer(rebasing: buffer[..<bytes.count]).initialize(from: bytes) }
                        return bytes.count
                    })
                    line.int("m", 2)
                }
                let lent = Self.line(json: json) { line in
                    line.int("n", 1)
                    line.text("summary", value)
                    line.int("m", 2)
                }
                #expect(written == lent, "\(json ? "JSON" : "text"): \(value)")
                // Asked again, with room enough, only when the first room (lentRoom at least) was short.
                let length = value.utf8.count
                #expect(rooms.first! >= LineBuilder.lentRoom)
                #expect(rooms.count == (rooms.first! >= length ? 1 : 2) && rooms.last! >= length, "\(rooms)")
            }
        }
    }

    @Test func textQuotesOnlyWhatItMust() {
        let text = Self.line(json: false) { line in
            line.text("a", "plain")
            line.text("b", "two words")
            line.text("c", "say \"hi\"")
            line.text("d", "k=v")
            line.text("e", "")
            line.text("dir", "C→U")
            line.null("absent")
            line.flags(FrameFlags(type: .request))
            line.flags(FrameFlags(type: .request, compressed: true, urgent: true, noReply: true))
        }
        #expect(text == " a=plain b=\"two words\" c=\"say \\\"hi\\\"\" d=\"k=v\" e= dir=C→U flags=- flags=ZUN")
    }

    @Test func jsonEscapes() {
        let text = Self.line(json: true, event: "message") { line in
            line.text("q", "a\"b\\c\nd\re\tf\u{1}g")
            line.int("n", 7)
            line.null("none")
            line.flags(FrameFlags(type: .response))
            Array("Sess\"ion".utf8).withUnsafeBytes { key in line.raw(key, UnsafeRawBufferPointer(start: nil, count: 0), redacted: true) }
        }
        #expect(text == #"{"time":"T","event":"message","q":"a\"b\\c\nd\re\tf\u0001g","n":7,"none":null,"flags":"-","Sess\"ion":"<redacted>"}"#)
    }

    /// Raw bytes the builder did not write itself are checked: valid UTF-8 (ASCII or not) is
    /// kept, and an invalid sequence (a property's raw bytes cut inside a character) becomes
    /// U+FFFD instead of making an invalid String. Lent text (a summary's bytes) is valid as lent.
    @Test func bytesFromOutsideAreKeptWhenValidAndRepairedWhenNot() {
        let raw = Self.line(json: false) { line in
            Array("café".utf8).withUnsafeBytes { line.raw("ok", $0) }
            ([0x66, 0xC3] as [UInt8]).withUnsafeBytes { line.raw("cut", $0) }  // "f" and half of "é"
        }
        let lent = Self.line(json: false) { line in
            line.text("ok", from: "café → (3 B)", writtenBy: { text, buffer in
                let bytes = Array(text.utf8)
                if bytes.count <= buffer.count { _ = UnsafeMutableBufferPointer(rebasing: buffer[..<bytes.count]).initialize(from: bytes) }
                return bytes.count
            })
        }
        #expect(raw == " ok=café cut=f\u{FFFD}")
        #expect(lent == " ok=\"café → (3 B)\"")
        for text in [raw, lent] {
            #expect(text.utf8.elementsEqual(String(decoding: Array(text.utf8), as: UTF8.self).utf8), "a valid String")
        }
    }

    /// Written to a sink, a line ends in a newline and holds the same bytes as its String; one
    /// with an invalid raw value is written repaired.
    @Test func linesWrittenToASinkAreTheirStringsWithANewline() {
        final class Collected: LogLineSink, @unchecked Sendable {
            var bytes: [UInt8] = []
            func write(lines: UnsafeRawBufferPointer) { bytes.append(contentsOf: lines) }
        }
        for json in [false, true] {
            let sink = Collected()
            func fill(_ line: inout LineBuilder) {
                line.int("session", 7)
                line.text("summary", "echo (3 B) → (3 B)")
                ([0x66, 0xC3] as [UInt8]).withUnsafeBytes { line.raw("cut", $0) }
            }
            var first = LineBuilder(json: json, event: "message")
            fill(&first)
            first.finish(to: sink)
            var second = LineBuilder(json: json, event: "message")
            fill(&second)
            let text = second.finish()
            let written = String(decoding: sink.bytes, as: UTF8.self)
            #expect(sink.bytes.last == 0x0A && sink.bytes.filter { $0 == 0x0A }.count == 1)
            #expect(written.dropLast().dropFirst(json ? 9 + LogTimestamp.length : LogTimestamp.length)
                    == text.dropFirst(json ? 9 + LogTimestamp.length : LogTimestamp.length))
            #expect(written.contains("f\u{FFFD}"))
        }
    }

    /// Values of every length from 0 to 40 bytes (short ones are copied word-wise, overlapping)
    /// are written whole, each after the last.
    @Test func valuesOfEveryLengthAreCopiedWhole() {
        let words = (0...40).map { length in String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) }) }
        let text = Self.line(json: false) { line in
            for word in words { line.text("w", word) }
        }
        #expect(text == words.map { " w=\($0)" }.joined())
    }

    /// A line built while another is open on the same thread gets its own buffer; both read whole.
    @Test func nestedBuildersKeepTheirOwnBytes() {
        var outer = LineBuilder(json: false, event: nil)
        outer.int("outer", 1)
        let inner = Self.line(json: false) { line in line.text("inner", "two") }
        outer.text("after", "inner")
        let line = outer.finish()
        #expect(inner == " inner=two")
        #expect(line.dropFirst(LogTimestamp.length) == " outer=1 after=inner")
        #expect(Self.line(json: false) { line in line.int("next", 3) } == " next=3")
    }

    @Test func longLinesGrowTheBuffer() {
        let long = String(repeating: "x", count: 3 * LineBuilder.initialCapacity)
        let quoted = String(repeating: "\"", count: LineBuilder.initialCapacity)
        let text = Self.line(json: false) { line in
            line.text("long", long)
            line.text("quotes", quoted)
            line.int("after", 1)
        }
        #expect(text == " long=\(long) quotes=\"\(String(repeating: "\\\"", count: LineBuilder.initialCapacity))\" after=1")
    }
}
