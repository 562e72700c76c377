import Foundation
import NIOCore
import Replication

/// Loads documents into a ``GatewayDatabase`` from JSON (`blipscope gateway --load FILE`):
///
/// ```json
/// {"docs": [{"_id": "hotel_1", "channels": ["hotels"], "name": "…",
///            "_attachments": {"photo.png": {"content_type": "image/png", "data": "<base64>"}}}],
///  "collections": {"inventory.airports": [{"_id": "…"}]}}
/// ```
///
/// Each document becomes a first revision (ID computed from its body, §4); attachments with
/// inline base64 `data` are stored by digest and replaced by their metadata; `"_deleted": true`
/// adds a tombstone on top. A top-level array is taken as `docs`.
public enum SeedData {
    /// Loads `path` into `database`; returns how many documents were added.
    @discardableResult
    public static func load(from path: String, into database: GatewayDatabase) throws(GatewayError) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { throw .seedData("cannot read \(path)") }
        return try load(json: ByteBuffer(bytes: data), into: database)
    }

    @discardableResult
    public static func load(json: ByteBuffer, into database: GatewayDatabase) throws(GatewayError) -> Int {
        let root = try JSONValue.parse(json, what: "seed data")
        var groups: [(CollectionPath, [JSONValue])] = []
        if let docs = root.arrayValue ?? root["docs"]?.arrayValue { groups.append((GatewayDatabase.defaultCollection, docs)) }
        for (name, docs) in root["collections"]?.objectValue ?? [:] {
            let path = CollectionPath(parsing: name)
            guard database.hasCollection(path) else { throw .seedData("database \(database.name) has no collection \(path)") }
            groups.append((path, docs.arrayValue ?? []))
        }
        var count = 0
        for (path, docs) in groups {
            for doc in docs {
                try add(doc, to: database, in: path)
                count += 1
            }
        }
        return count
    }

    private static func add(_ doc: JSONValue, to database: GatewayDatabase, in path: CollectionPath) throws(GatewayError) {
        guard var members = doc.objectValue, let docID = members.removeValue(forKey: "_id")?.stringValue else {
            throw .seedData("every document needs an \"_id\" string: \(doc.description.prefix(80))")
        }
        let deleted = members.removeValue(forKey: "_deleted")?.isTruthy ?? false
        var attachments: [String: Attachment] = [:]
        for (name, meta) in members.removeValue(forKey: "_attachments")?.objectValue ?? [:] {
            guard let base64 = meta["data"]?.stringValue, let data = Data(base64Encoded: base64) else {
                throw .seedData("attachment \(name) of \(docID) needs base64 \"data\"")
            }
            attachments[name] = Attachment(contentType: meta["content_type"]?.stringValue ?? "application/octet-stream",
                                           data: Array(data))
        }
        try database.put(docID, body: members, attachments: attachments, in: path)
        if deleted { try database.delete(docID, in: path) }
    }
}
