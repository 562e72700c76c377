import NIOCore
import Replication

/// How new revision IDs and the facts the store needs are derived from a body.
enum RevisionDigest {
    /// `generation-digest` (replication-protocol §4): the generation is the parent's plus one, the
    /// digest a SHA-1 over the parent ID's length (one byte) and text, a deleted flag byte, and
    /// the body's canonical JSON (keys sorted, no spaces), as LiteCore computes it. Equal edits
    /// of equal parents on two peers thus get equal IDs.
    static func revID(parent: String?, deleted: Bool, body: ByteBuffer) -> String {
        let generation = (parent.map(StoredRevision.generation(of:)) ?? 0) + 1
        var sha = SHA1()
        let parentBytes = Array((parent ?? "").utf8.prefix(255))
        sha.update([UInt8(parentBytes.count)])
        sha.update(parentBytes)
        sha.update([deleted ? 1 : 0])
        let canonical = (try? JSONValue.parse(body, what: "body"))?.jsonBuffer ?? body
        canonical.withUnsafeReadableBytes { sha.update($0) }
        return "\(generation)-\(sha.finish().hexString)"
    }

    /// The `channels` property of a body (a string or an array of strings, as Sync Gateway's
    /// default sync function reads it); nil when the body has none.
    static func channels(in body: ByteBuffer?) -> [String]? {
        guard let body, body.contains("\"channels\""),
              let value = try? JSONValue.parse(body, what: "body"), let channels = value["channels"] else { return nil }
        if let single = channels.stringValue { return [single] }
        return channels.arrayValue?.compactMap(\.stringValue)
    }
}
