/// The attachments a document body refers to, in both of the forms peers send
/// (replication-protocol §3 "getAttachment": a digest is what a peer asks for):
///
/// - the older `_attachments` dictionary at the top level, name → metadata;
/// - Couchbase Lite 3.x blobs: dictionaries `{"@type": "blob", "digest": …, "length": …,
///   "content_type": …}` nested anywhere in the body (docs/litecore-behaviour.md), named here by
///   their path, e.g. `photos[0]` or `profile.avatar`.
///
/// A digest is listed once, in the order first met (`_attachments` first), so a body that carries
/// a blob both ways counts it once. The walk stops at the parser's nesting limit.
public enum DocumentBlobs {
    public static func references(in body: JSONValue) -> [AttachmentReference] {
        var found: [AttachmentReference] = []
        var seen: Set<String> = []
        if let entries = body.objectValue?["_attachments"]?.objectValue {
            for name in entries.keys.sorted() {
                guard let meta = entries[name]?.objectValue, let reference = reference(named: name, meta: meta),
                      seen.insert(reference.digest).inserted else { continue }
                found.append(reference)
            }
        }
        walk(body, path: "", into: &found, seen: &seen)
        return found
    }

    /// True for a dictionary that is a blob: `@type` is `blob` and it has a digest.
    public static func isBlob(_ members: [String: JSONValue]) -> Bool {
        members["@type"]?.stringValue == "blob" && members["digest"]?.stringValue != nil
    }

    private static func reference(named name: String, meta: [String: JSONValue]) -> AttachmentReference? {
        guard let digest = meta["digest"]?.stringValue else { return nil }
        return AttachmentReference(name: name, digest: digest, length: meta["length"]?.intValue,
                                   isStub: meta["stub"]?.isTruthy ?? false,
                                   contentType: meta["content_type"]?.stringValue)
    }

    private static func walk(_ value: JSONValue, path: String, into found: inout [AttachmentReference],
                             seen: inout Set<String>) {
        switch value {
        case .object(let members):
            if isBlob(members) {
                if let reference = reference(named: path, meta: members), seen.insert(reference.digest).inserted {
                    found.append(reference)
                }
                return
            }
            for key in members.keys.sorted() where !(path.isEmpty && key == "_attachments") {
                walk(members[key]!, path: path.isEmpty ? key : "\(path).\(key)", into: &found, seen: &seen)
            }
        case .array(let items):
            for (index, item) in items.enumerated() { walk(item, path: "\(path)[\(index)]", into: &found, seen: &seen) }
        default:
            return
        }
    }
}
