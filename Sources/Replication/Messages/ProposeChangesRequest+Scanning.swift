import NIOCore

/// The proposeChanges fast path, like ``ChangesRequest``'s: one pass over the bytes, nil for
/// anything unusual so that the strict path reads (and reports) it instead.
extension ProposeChangesRequest {
    static func scanEntries(_ body: ByteBuffer) -> [Entry]? {
        body.withUnsafeReadableBytes { bytes -> [Entry]? in
            var scanner = JSONScanner(bytes)
            guard scanner.consume(UInt8(ascii: "[")) else { return nil }
            var entries: [Entry] = []
            if scanner.consume(UInt8(ascii: "]")) { return scanner.isAtEnd ? entries : nil }
            repeat {
                guard entries.count < ChangesRequest.maxEntries, let entry = scanEntry(&scanner) else { return nil }
                entries.append(entry)
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "]")), scanner.isAtEnd else { return nil }
            return entries
        }
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
        body.withUnsafeReadableBytes { bytes -> [Int]? in
            var scanner = JSONScanner(bytes)
            guard scanner.consume(UInt8(ascii: "[")) else { return nil }
            var statuses: [Int] = []
            if scanner.consume(UInt8(ascii: "]")) { return scanner.isAtEnd ? statuses : nil }
            repeat {
                guard let token = scanner.number(), let status = JSONScanner.unsignedInteger(token) else { return nil }
                statuses.append(status)
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "]")), scanner.isAtEnd else { return nil }
            return statuses
        }
    }
}
