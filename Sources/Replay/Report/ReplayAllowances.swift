/// What may differ between recorded and new replies without failing the replay (`--allow`).
///
/// An allowance is a name from ``named`` or a pattern `[profile:]path`: the profile is a
/// request profile or `*` (any; also when left out); in the path `*` stands for one member name
/// or index (no `.`, `[` or `]`) and `**` for anything. Paths are those of ``ReplyComparator``:
/// `type`, `error.domain`, `error.code`, `properties.<name>`, `body`, `body.<member>`,
/// `body[<index>]`, `reply`; and `unmatched` for a peer request no recorded one matched.
public struct ReplayAllowances: Sendable {
    /// The named groups and the patterns each stands for.
    public static let named: [String: [String]] = [
        // Sequences are the peer's own counters: a fresh database numbers them afresh.
        "sequences": ["getCheckpoint:body.local", "getCheckpoint:body.remote",
                      "getCollections:body[*].local", "getCollections:body[*].remote",
                      "changes:body[*][0]", "subChanges:properties.since"],
        // The MVCC revision of the checkpoint document on the peer.
        "checkpoint-rev": ["getCheckpoint:properties.rev", "setCheckpoint:properties.rev",
                           "getCollections:body[*]._rev", "getCollections:body[*].rev"],
        // Revision IDs (their digests differ when the peer wrote other revisions): known revs
        // in changes replies, rev properties and bodies' _rev.
        "revs": ["changes:body[*][*]", "changes:body[*]", "*:properties.rev", "*:body._rev", "*:body[*]._rev"],
        // Everything about checkpoints: a fresh peer has none, a used one has another.
        "checkpoints": ["getCheckpoint:**", "setCheckpoint:**", "getCollections:**"],
        "unmatched": ["*:unmatched"],
    ]

    /// Allowed unless `--strict`: a replay against a fresh peer always differs in these.
    public static let defaults = ["sequences", "checkpoint-rev"]

    public let entries: [String]
    private let patterns: [(profile: String, path: String, source: String)]

    /// Fails with the entry that is neither a known name nor a pattern.
    public init(_ entries: [String]) throws(ReplayError) {
        self.entries = entries
        var patterns: [(String, String, String)] = []
        for entry in entries {
            if let group = Self.named[entry] {
                patterns += group.map { Self.split($0) }.map { ($0.0, $0.1, entry) }
            } else if entry.contains(".") || entry.contains("[") || entry.contains(":") || entry.contains("*")
                        || ["type", "body", "reply"].contains(entry) {
                let (profile, path) = Self.split(entry)
                patterns.append((profile, path, entry))
            } else {
                throw .invalidOption("unknown --allow \(entry): use \(Self.named.keys.sorted().joined(separator: ", ")) or a [profile:]path pattern")
            }
        }
        self.patterns = patterns
    }

    /// The allowance that covers `path` in a reply to `profile`, if any.
    public func allowance(profile: String, path: String) -> String? {
        patterns.first { ($0.profile == "*" || $0.profile == profile) && Self.glob($0.path, matches: path) }?.source
    }

    private static func split(_ entry: String) -> (String, String) {
        guard let colon = entry.firstIndex(of: ":") else { return ("*", entry) }
        return (String(entry[..<colon]), String(entry[entry.index(after: colon)...]))
    }

    /// `*` = one name or index, `**` = anything, everything else literal.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        glob(Array(pattern), 0, Array(text), 0)
    }

    private static func glob(_ pattern: [Character], _ p: Int, _ text: [Character], _ t: Int) -> Bool {
        guard p < pattern.count else { return t == text.count }
        if pattern[p] == "*" {
            let deep = p + 1 < pattern.count && pattern[p + 1] == "*"
            let rest = p + (deep ? 2 : 1)
            var end = t
            while true {
                if glob(pattern, rest, text, end) { return true }
                guard end < text.count, deep || !".[]".contains(text[end]) else { return false }
                end += 1
            }
        }
        return t < text.count && pattern[p] == text[t] && glob(pattern, p + 1, text, t + 1)
    }
}
