import Testing
@testable import BLIPCore

/// Which library inflates each frame of a direction (the default, ``DecodeLibrary/isal``): told
/// as the frame sizes of the traffic it is meant for.
@Suite("Inflater choice: zlib for small frames, ISA-L for large ones")
struct InflaterChoiceTests {
    /// The libraries chosen for frames of these compressed sizes, in order.
    static func choices(_ sizes: [Int]) -> [String] {
        var choice = InflaterChoice()
        return sizes.map { size in
            choice.take(payloadBytes: size)
            return choice.usesISAL ? "isal" : "zlib"
        }
    }

    @Test("small messages (a few hundred bytes each) never leave zlib")
    func smallMessages() {
        #expect(Self.choices([180, 95, 210, 2047, 120]) == Array(repeating: "zlib", count: 5))
    }

    @Test("a large message's first frame goes to ISA-L, and its short last frame stays there")
    func largeMessages() {
        // Two 1 MiB messages of JSON: 16 KiB frames compressed to about 4 KiB, a short last frame
        // each; the next message starts large again.
        let message = Array(repeating: 4_100, count: 4) + [700]
        #expect(Self.choices(message + message) == Array(repeating: "isal", count: 10))
    }

    @Test("a run of small frames after large ones goes back to zlib, on the fourth")
    func backToZlib() {
        #expect(Self.choices([5_000, 300, 300, 300, 300, 300, 2_048])
                == ["isal", "isal", "isal", "isal", "zlib", "zlib", "isal"])
    }
}
