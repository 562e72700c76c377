/// The kinds of echo session a soak mixes: each has its own profile, message sizes, compression
/// and requests in flight. A session sends only its kind; the kinds alternate across sessions.
public struct SessionKind: Sendable, Equatable {
    public enum Compression: Sendable, Equatable { case never, always, half }
    /// Which body pool a message is cut from (``SoakBodies``).
    public enum Content: Sendable, Equatable { case json, noise, either }

    public var profile: String
    /// Body sizes in bytes, picked log-uniformly (as many small messages as large ones per doubling).
    public var sizes: ClosedRange<Int>
    public var compression: Compression
    public var content: Content
    public var inFlight: Int
    /// The share of ``SoakConfiguration/sessionShare`` this kind sends per session (large
    /// messages: fewer of them).
    public var share: Double
    /// How often the kind is picked, relative to the others.
    public var weight: Int

    public static let all: [SessionKind] = [
        SessionKind(profile: "soakSmall", sizes: 64...2_048, compression: .never, content: .noise, inFlight: 8, share: 1, weight: 4),
        SessionKind(profile: "soakDocs", sizes: 64...4_096, compression: .always, content: .json, inFlight: 8, share: 1, weight: 3),
        // Up to 64 KiB: from one frame to five (16 KiB frames), compressed or not.
        SessionKind(profile: "soakMixed", sizes: 64...65_536, compression: .half, content: .either, inFlight: 4, share: 0.25, weight: 2),
        SessionKind(profile: "soakLarge", sizes: 65_536...262_144, compression: .always, content: .json, inFlight: 2, share: 0.02, weight: 1),
    ]

    /// The kind for a draw of `random` in 0..<total weight.
    public static func pick(_ draw: UInt64) -> SessionKind {
        var rest = Int(draw % UInt64(all.reduce(0) { $0 + $1.weight }))
        for kind in all {
            if rest < kind.weight { return kind }
            rest -= kind.weight
        }
        return all[0]
    }
}
