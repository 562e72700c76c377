import Testing
@testable import BLIPCore

/// Which library inflates each frame of a direction (the default, ``DecodeLibrary/isal``): told
/// as what the frames of the traffic it is meant for inflate to.
@Suite("Inflater choice: zlib for small frames, ISA-L after large ones")
struct InflaterChoiceTests {
    /// The library that inflated each frame, given what each inflated to.
    static func choices(_ outputs: [Int]) -> [String] {
        var choice = InflaterChoice()
        return outputs.map { output in
            defer { choice.inflated(output) }
            return choice.usesISAL ? "isal" : "zlib"
        }
    }

    @Test("small messages (a few hundred bytes each) never leave zlib")
    func smallMessages() {
        #expect(Self.choices([300, 95, 8_191, 300, 120]) == Array(repeating: "zlib", count: 5))
    }

    @Test("after a large frame ISA-L takes the rest of a large message, its short last frame, and the next message")
    func largeMessages() {
        // Two 1 MiB messages in 16 KiB frames, a short last frame each.
        let message = Array(repeating: 16_374, count: 4) + [700]
        #expect(Self.choices(message + message) == ["zlib"] + Array(repeating: "isal", count: 9))
    }

    @Test("a run of small frames after large ones goes back to zlib, after the fourth")
    func backToZlib() {
        #expect(Self.choices([16_374, 300, 300, 300, 300, 300, 8_192, 300])
                == ["zlib", "isal", "isal", "isal", "isal", "zlib", "zlib", "isal"])
    }
}
