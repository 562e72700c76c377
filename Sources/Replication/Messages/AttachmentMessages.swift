import NIOCore

/// getAttachment: asks for an attachment's contents by digest (replication-protocol §3
/// "getAttachment"; Connected Client §3.2). Newer peers add `docID`.
public struct GetAttachmentRequest: Sendable, Equatable {
    public var collection: Int?
    public var digest: String?
    public var docID: String?

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        digest = reader.required(.digest)
        docID = reader.string(.docID)
    }
}

/// proveAttachment: asks the peer to prove it holds an attachment, sending a 16–255 byte nonce
/// (§3 "proveAttachment"). The reply carries the proof digest.
public struct ProveAttachmentRequest: Sendable, Equatable {
    public var collection: Int?
    public var digest: String?
    public var nonceBytes: Int

    static let nonceSizes = 16...255

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        digest = reader.required(.digest)
        nonceBytes = reader.body.readableBytes
        if !Self.nonceSizes.contains(nonceBytes) {
            reader.report(.wrongShape("proveAttachment nonce of \(nonceBytes) bytes", expected: "16 to 255 bytes"))
        }
    }
}

/// proveAttachment's reply: the SHA-1 proof in attachment-digest form (§3 "proveAttachment").
public struct ProveAttachmentReply: Sendable, Equatable {
    public var proof: String

    init(reading reader: inout MessageReader) {
        proof = String(buffer: reader.body)
        if proof.isEmpty { reader.report(.wrongShape("proveAttachment reply", expected: "a proof digest")) }
    }
}
