import BLIPCore
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

extension ErrorReply {
    /// Reads a peer's ERR: a missing `Error-Code` is a violation (read as 0); a missing domain
    /// is `BLIP`'s (§6); the message is the body's first 200 characters.
    init(reading reader: inout MessageReader) {
        let codeText = reader.string(.errorCode)
        self.init(domain: reader.string(.errorDomain) ?? "BLIP", code: codeText.flatMap { Int($0) } ?? 0,
                  message: String(buffer: reader.body).prefix(200).description)
        if codeText == nil { reader.report(.missingProperty("ERR", .errorCode)) }
    }
}

/// A message of a profile this module does not type (e.g. `echo`): shown generically.
public struct GenericMessage: Sendable, Equatable {
    public var propertyCount: Int
    public var bodyBytes: Int
}
