import NIOCore

extension GatewayDatabase {
    /// The digest attachments are named by: `sha1-` and the base64 SHA-1 of the contents, as
    /// Couchbase Lite and Sync Gateway write it (replication-protocol §3 "getAttachment").
    public static func attachmentDigest<Bytes: Sequence>(of data: Bytes) -> String where Bytes.Element == UInt8 {
        "sha1-" + SHA1.hash(data).base64String
    }

    /// The proof that one holds `data`, for a proveAttachment `nonce`: SHA-1 of the nonce's length
    /// (one byte), the nonce and the contents, in digest form (§3 "proveAttachment"; the spec's
    /// text says hex, but "the same encoding used for attachment digests" is base64 in practice).
    public static func attachmentProof(nonce: [UInt8], data: ByteBuffer) -> String {
        var sha = SHA1()
        sha.update([UInt8(truncatingIfNeeded: nonce.count)])
        sha.update(nonce)
        data.withUnsafeReadableBytes { sha.update($0) }
        return "sha1-" + sha.finish().base64String
    }

    /// Stores `data` under its digest and returns the digest.
    @discardableResult
    public func storeAttachment(_ data: [UInt8]) -> String {
        let digest = Self.attachmentDigest(of: data)
        withState { $0.attachments[digest] = ByteBuffer(bytes: data) }
        return digest
    }

    /// Stores `data` if it matches `digest`; a mismatch is a 400 (the peer sent the wrong bytes).
    func storeAttachment(_ data: ByteBuffer, expecting digest: String) throws(GatewayError) {
        let actual = Self.attachmentDigest(of: data.readableBytesView)
        guard actual == digest else { throw .badRequest("attachment data has digest \(actual), not \(digest)") }
        withState { $0.attachments[digest] = data }
    }

    public func attachment(digest: String) -> ByteBuffer? { withState { $0.attachments[digest] } }

    public func hasAttachment(digest: String) -> Bool { withState { $0.attachments[digest] != nil } }
}
