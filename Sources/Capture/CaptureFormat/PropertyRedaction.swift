import BLIPCore

/// Which BLIP properties hold secrets, and the properties with those values replaced: one rule
/// for everything that shows or stores properties (the relay's log, the capture file's message
/// heads, `inspect`).
///
/// A property is secret when its name contains, ignoring ASCII case, `auth`, `cookie`, `token`,
/// `password`, `secret` or `session`. The name stays; the value becomes ``placeholder``.
///
/// It does not rewrite frame bytes: a capture's frame records and a pcap still carry what was
/// sent (their CRCs and deflate streams run across the connection).
public enum PropertyRedaction {
    public static let placeholder = HeaderRedaction.placeholder

    private static let secretWords: [[UInt8]] = ["auth", "cookie", "token", "password", "secret", "session"].map { Array($0.utf8) }

    /// Whether a property named by these UTF-8 bytes is secret; no lowercased copy is made.
    public static func isSecret(_ name: UnsafeRawBufferPointer) -> Bool {
        secretWords.contains { word in
            guard name.count >= word.count else { return false }
            for start in 0...(name.count - word.count) {
                var match = true
                for index in 0..<word.count where name[start + index] | 0x20 != word[index] {
                    match = false
                    break
                }
                if match { return true }
            }
            return false
        }
    }

    public static func isSecret(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isSecret(UnsafeRawBufferPointer($0)) }
    }

    /// `properties` with every secret value replaced; the same value when none is secret.
    public static func redact(_ properties: Properties) -> Properties {
        let pairs = properties.pairs
        guard pairs.contains(where: { isSecret($0.key) }) else { return properties }
        return Properties(pairs.map { ($0.key, isSecret($0.key) ? placeholder : $0.value) })
    }
}
