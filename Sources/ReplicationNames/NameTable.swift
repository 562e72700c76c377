#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names (profiles, properties) looked up by their UTF-8 bytes: by length first, then one
/// `memcmp` per name of that length, so no String is made and nothing is hashed. Built once
/// from the names as their enums spell them.
struct NameTable<Value: Sendable>: Sendable {
    private var byLength: [[(bytes: [UInt8], value: Value)]]

    init(_ names: [(String, Value)]) {
        let longest = names.map(\.0.utf8.count).max() ?? 0
        byLength = Array(repeating: [], count: longest + 1)
        for (name, value) in names { byLength[name.utf8.count].append((Array(name.utf8), value)) }
    }

    func lookup(_ bytes: UnsafeRawBufferPointer) -> Value? {
        guard bytes.count < byLength.count, let base = bytes.baseAddress else { return nil }
        for entry in byLength[bytes.count] {
            let equal = entry.bytes.withUnsafeBytes { memcmp($0.baseAddress!, base, bytes.count) == 0 }
            if equal { return entry.value }
        }
        return nil
    }
}
