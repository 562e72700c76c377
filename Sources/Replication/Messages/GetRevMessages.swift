/// getRev (Connected Client §3.1): asks for a document's current revision; `ifNotRev` lets
/// the peer answer 304 instead.
public struct GetRevRequest: Sendable, Equatable {
    public var docID: String?
    public var ifNotRev: String?

    init(reading reader: inout MessageReader) {
        docID = reader.required(.id)
        ifNotRev = reader.string(.ifNotRev)
    }
}

/// getRev's reply: the current revision ID, tombstone flag and body (Connected Client §3.1).
public struct GetRevReply: Sendable, Equatable {
    public var revID: String?
    public var deleted: Bool
    public var bodyBytes: Int

    init(reading reader: inout MessageReader) {
        revID = reader.required(.rev)
        deleted = reader.bool(.deleted)
        bodyBytes = reader.body.readableBytes
        if let revID { _ = reader.checkRevID(revID) }
    }
}

/// An ERR reply: `Error-Domain` (BLIP, HTTP…), `Error-Code`, and a message body (BLIP §6).
public struct ErrorReply: Sendable, Equatable {
    public var domain: String
    public var code: Int
    public var message: String

    /// `HTTP 409`, the key errors are counted under.
    public var key: String { "\(domain) \(code)" }

    init(reading reader: inout MessageReader) {
        domain = reader.string(.errorDomain) ?? "BLIP"
        let codeText = reader.string(.errorCode)
        code = codeText.flatMap { Int($0) } ?? 0
        if codeText == nil { reader.report(.missingProperty("ERR", "Error-Code")) }
        message = String(buffer: reader.body).prefix(200).description
    }
}

/// A message of a profile this module does not type (e.g. `echo`): shown generically.
public struct GenericMessage: Sendable, Equatable {
    public var propertyCount: Int
    public var bodyBytes: Int
}
