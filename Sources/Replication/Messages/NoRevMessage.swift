/// norev: a requested revision will not come (replication-protocol §3 "norev").
public struct NoRevMessage: Sendable, Equatable {
    public var collection: Int?
    public var docID: String?
    public var revID: String?
    public var sequence: JSONValue?
    /// An HTTP-like status.
    public var error: Int?
    public var reason: String?

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        docID = reader.required(.id)
        revID = reader.required(.rev)
        sequence = reader.json(property: .sequence)
        error = reader.int(.error)
        reason = reader.string(.reason)
        if let revID { _ = reader.checkRevID(revID) }
    }
}
