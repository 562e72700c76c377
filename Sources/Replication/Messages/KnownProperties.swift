/// The known properties (``PropertyName``) of one message and their values, first occurrence
/// of each, kept inline: up to six without any allocation (a rev has at most five of them in
/// practice), the rest in an overflow array.
struct KnownProperties {
    /// Byte `i` holds the code of the name in slot `i`; 0 marks the first free slot.
    private var codes: UInt64 = 0
    private var value0 = "", value1 = "", value2 = "", value3 = "", value4 = "", value5 = ""
    private var overflow: [(name: PropertyName, value: String)] = []

    static let inlineSlots = 6

    /// The value of `name`, if present.
    func value(of name: PropertyName) -> String? {
        let code = UInt64(name.code)
        var packed = codes
        var slot = 0
        while packed != 0 {
            if packed & 0xFF == code { return value(at: slot) }
            packed >>= 8
            slot += 1
        }
        guard slot == Self.inlineSlots else { return nil }
        for entry in overflow where entry.name == name { return entry.value }
        return nil
    }

    /// Records `value` unless `name` is already present (the first occurrence counts).
    mutating func add(_ name: PropertyName, value: @autoclosure () -> String) {
        guard self.value(of: name) == nil else { return }
        var packed = codes
        var slot = 0
        while packed != 0 {
            packed >>= 8
            slot += 1
        }
        guard slot < Self.inlineSlots else {
            overflow.append((name, value()))
            return
        }
        codes |= UInt64(name.code) << UInt64(8 * slot)
        switch slot {
        case 0: value0 = value()
        case 1: value1 = value()
        case 2: value2 = value()
        case 3: value3 = value()
        case 4: value4 = value()
        default: value5 = value()
        }
    }

    private func value(at slot: Int) -> String {
        switch slot {
        case 0: return value0
        case 1: return value1
        case 2: return value2
        case 3: return value3
        case 4: return value4
        default: return value5
        }
    }
}
