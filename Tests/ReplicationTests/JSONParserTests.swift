import Testing
@testable import Replication

@Suite("JSON bodies")
struct JSONParserTests {
    @Test("numbers keep their text so opaque sequences show as sent")
    func numbersKeepText() throws {
        let value = try JSONParser.parse(#"[12345678901234567890, -1.5e3, "a\"b\u00e9\ud83d\ude00", true, null, {"k": [0]}]"#)
        let items = try #require(value.arrayValue)
        #expect(items[0] == .number("12345678901234567890"))
        #expect(items[1] == .number("-1.5e3"))
        #expect(items[2] == .string("a\"bé😀"))
        #expect(items[3] == .bool(true))
        #expect(items[4] == .null)
        #expect(items[5]["k"] == .array([.number("0")]))
        #expect(value.description == #"[12345678901234567890,-1.5e3,"a\"bé😀",true,null,{"k":[0]}]"#)
    }

    @Test("malformed input is a failure with an offset, never a crash",
          arguments: ["", "[", "[1,]", "{\"a\" 1}", "tru", "01", "\"\\x\"", "[1] x", "\"\u{01}\"", "-", "1.", "[\"\\ud83d\"]x"])
    func malformed(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test("absurd nesting is refused")
    func deepNesting() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }
}
