import NIOCore

/// The proposeChanges fast path, like ``ChangesRequest``'s: one pass over the bytes, nil for
/// anything unusual so that the strict path reads (and reports) it instead.
extension ProposeChangesRequest {
    static func scanEntries(_ body: ByteBuffer) -> [Entry]? {
        JSONScanner.scanArray(body, maxCount: ChangesRequest.maxEntries, element: scanEntry)
    }

    /// `["docID", "revID", "serverRevID"?, bodySize?]`.
    private static func scanEntry(_ scanner: inout JSONScanner) -> Entry? {
        guard scanner.consume(UInt8(ascii: "[")), let docID = scanner.simpleString(),
              scanner.consume(UInt8(ascii: ",")), let revID = scanner.simpleString() else { return nil }
        var serverRevID: String?
        var bodySize: Int?
        if scanner.consume(UInt8(ascii: ",")) {
            guard let server = scanner.simpleString() else { return nil }
            if !server.isEmpty { serverRevID = String(decoding: server, as: UTF8.self) }
            if scanner.consume(UInt8(ascii: ",")) {
                guard let token = scanner.number(), let size = JSONScanner.unsignedInteger(token) else { return nil }
                bodySize = size
            }
        }
        guard scanner.consume(UInt8(ascii: "]")) else { return nil }
        return Entry(docID: String(decoding: docID, as: UTF8.self), revID: String(decoding: revID, as: UTF8.self),
                     serverRevID: serverRevID, bodySize: bodySize)
    }
}

extension ProposeChangesReply {
    /// The statuses in one pass: non-negative integers only; nil for anything else.
    static func scanStatuses(_ body: ByteBuffer) -> [Int]? {
        JSONScanner.scanArray(body) { scanner in scanner.number().flatMap(JSONScanner.unsignedInteger) }
    }
}
