import Gateway
import NIOCore
import Replication

/// The local changes the demo pushes, chosen among the pulled documents: the sample file's
/// `hotel_02` (changed), `hotel_03` (the conflict) and `route_BER_FCO` (deleted) when present,
/// otherwise the first live documents without attachments. Plus one new document with a small
/// attachment.
struct DemoEdits: Sendable {
    var added = "demo_note"
    var changed: String
    var conflicted: String
    var deleted: String

    static let attachmentName = "hello.txt"
    static let attachment = Attachment(contentType: "text/plain", data: Array("Pushed through the BlipScope relay.\n".utf8))

    static func choose(from local: GatewayDatabase) throws -> DemoEdits {
        let live = local.documentIDs().filter { id in
            guard let document = local.document(id), !document.isDeleted else { return false }
            return !String(buffer: document.body).contains("\"_attachments\"")
        }
        var pool = ["hotel_02", "hotel_03", "route_BER_FCO"].filter(live.contains)
        pool += live.filter { !pool.contains($0) }
        guard pool.count >= 3 else {
            throw DemoFailure("the seed data needs at least three live documents without attachments, it has \(pool.count)")
        }
        return DemoEdits(changed: pool[0], conflicted: pool[1], deleted: pool[2])
    }

    /// Makes the local edits and the gateway's competing edit; returns the gateway's revision of
    /// the conflicted document (which must survive the push).
    func apply(local: GatewayDatabase, upstream: GatewayDatabase) throws -> String {
        try local.put(added, body: ["type": .string("note"), "text": .string("written by blipscope demo"),
                                    "channels": .array([.string("notes")])],
                      attachments: [Self.attachmentName: Self.attachment])
        try local.put(changed, body: try edited(changed, in: local, note: "changed locally, pushed through the relay"))
        try local.delete(deleted)
        try local.put(conflicted, body: try edited(conflicted, in: local, note: "changed locally"))
        return try upstream.put(conflicted, body: try edited(conflicted, in: upstream, note: "changed on the gateway meanwhile"))
    }

    /// Checks the push: three revisions and the attachment accepted and byte-equal on the
    /// gateway, the conflict reported and the gateway's revision kept.
    func verify(_ result: ReplicationResult, local: GatewayDatabase, upstream: GatewayDatabase, theirs: String) throws {
        var problems = Self.differences(local, upstream, ids: [added, changed, deleted])
        if result.pushedRevisions != 3 { problems.append("\(result.pushedRevisions) revisions pushed instead of 3") }
        if !upstream.hasAttachment(digest: GatewayDatabase.attachmentDigest(of: Self.attachment.data)) {
            problems.append("the gateway lacks the attachment \(Self.attachmentName)")
        }
        if result.conflicts.map(\.docID) != [conflicted] {
            problems.append("conflicts reported: \(result.conflicts.map(\.docID)) instead of [\(conflicted)]")
        }
        if upstream.document(conflicted)?.currentRevID != theirs { problems.append("the gateway lost its revision of \(conflicted)") }
        if upstream.document(deleted)?.isDeleted != true { problems.append("\(deleted) is not deleted on the gateway") }
        if !result.documentErrors.isEmpty { problems.append("document errors: \(result.documentErrors)") }
        guard problems.isEmpty else { throw DemoFailure("the push went wrong: \(problems.joined(separator: "; "))") }
    }

    /// IDs among `ids` whose current revision, deletion or body bytes differ between `a` and `b`.
    static func differences(_ a: GatewayDatabase, _ b: GatewayDatabase, ids: [String]) -> [String] {
        ids.filter { id in
            guard let left = a.document(id), let right = b.document(id) else { return true }
            return left.currentRevID != right.currentRevID || left.isDeleted != right.isDeleted || left.body != right.body
        }
    }

    private func edited(_ id: String, in database: GatewayDatabase, note: String) throws -> [String: JSONValue] {
        guard let document = database.document(id),
              var members = DecodedJSON.members(of: Array(document.body.readableBytesView)) else {
            throw DemoFailure("\(id) in \(database.name) is missing or not a JSON object")
        }
        members["demo"] = .string(note)
        return members
    }
}
