import Foundation
import Replication

/// The gateway's source of new versions for its own edits (replication-protocol §4): a hybrid
/// logical clock as LiteCore keeps one (`HybridClock.cc`: nanoseconds since the epoch with the
/// low 16 bits as a counter, never going backwards) and a source ID of its own, 16 bytes in
/// base64 without padding (`SourceID.hh`). Not thread-safe: the database calls it under its lock.
struct VersionClock: Sendable {
    let sourceID: String
    private var last: UInt64 = 0

    /// A source ID derived from `uuid`'s 16 bytes.
    init(uuid: UUID) {
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        sourceID = String(Data(bytes).base64EncodedString().prefix(22))
    }

    /// The next timestamp: the wall clock with the counter bits cleared, or one past the last
    /// one given when the wall clock has not moved on.
    /// Never at or before `seen` either (the latest time of the vector being succeeded), as a
    /// hybrid clock moves past the times it has seen.
    mutating func now(wall: UInt64 = UInt64(Date().timeIntervalSince1970 * 1_000_000_000), seen: UInt64 = 0) -> UInt64 {
        var time = wall & ~0xFFFF
        let floor = max(last, seen)
        if time <= floor { time = floor + 1 }
        last = time
        return time
    }

    /// A new version for an edit of a revision whose vector was `previous` (nil for a new
    /// document) or, with no vector, whose rev-tree ID was `previousRevID`: the new current
    /// version first, then every earlier version except this source's, merges flattened into
    /// the history (LiteCore `VersionVector::addNewVersion`); a rev-tree parent enters as its
    /// legacy version (`VectorRecord.cc`), so LiteCore 4 sees the edit descend from it.
    mutating func nextVersion(revID: String, after previous: VersionVector?, previousRevID: String?) -> StoredVersion {
        let current = Version(timestamp: now(seen: previous?.versions.map(\.timestamp).max() ?? 0),
                              sourceID: Substring(sourceID))
        var past: [Version] = []
        if let previous {
            past = previous.versions.filter { $0.sourceID != Substring(sourceID) }
        } else if let previousRevID, let tree = try? TreeRevID.parse(previousRevID).get() {
            past = [Version.legacy(tree)]
        }
        var seen: Set<Substring> = []
        past = past.filter { seen.insert($0.sourceID).inserted }
        return StoredVersion(revID: revID, current: current.description,
                             history: past.map(\.description).joined(separator: ", "))
    }
}
