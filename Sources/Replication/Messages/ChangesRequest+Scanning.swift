import NIOCore

/// The changes fast path: the body's entries read in one pass over its bytes, with no JSON
/// value tree. Any body it does not fully handle (escapes, nested sequences, bad shapes,
/// invalid JSON) returns nil, and the strict tree-based path then reads it and reports what is
/// wrong, so results and violations are the same either way.
extension ChangesRequest {
    static func scanEntries(_ body: ByteBuffer) -> [Entry]? {
        JSONScanner.scanArray(body, maxCount: maxEntries, element: scanEntry)
    }

    /// `[sequence, "docID", "revID", deleted?, bodySize?]`.
    private static func scanEntry(_ scanner: inout JSONScanner) -> Entry? {
        guard scanner.consume(UInt8(ascii: "[")), let sequence = scanSequence(&scanner),
              scanner.consume(UInt8(ascii: ",")), let docID = scanner.simpleString(),
              scanner.consume(UInt8(ascii: ",")), let revID = scanner.simpleString() else { return nil }
        var flags = 0
        var bodySize: Int?
        if scanner.consume(UInt8(ascii: ",")) {
            if let next = scanner.peek(), JSONScanner.isDigit(next) {
                // Sync Gateway's bitfield (CBMobile_3 and later): 1 deleted, 2 revoked, 4 removed.
                guard let token = scanner.number(), let value = JSONScanner.unsignedInteger(token) else { return nil }
                flags = value
            } else {
                guard let flag = scanner.truthiness(depth: 2) else { return nil }
                flags = flag ? Entry.deletedFlag : 0
            }
            if scanner.consume(UInt8(ascii: ",")) {
                guard let token = scanner.number(), let size = JSONScanner.unsignedInteger(token) else { return nil }
                bodySize = size
            }
        }
        guard scanner.consume(UInt8(ascii: "]")) else { return nil }
        return Entry(sequence: sequence, docID: String(decoding: docID, as: UTF8.self),
                     revID: String(decoding: revID, as: UTF8.self), flags: flags, bodySize: bodySize)
    }

    /// A sequence that is a number or a plain string (other JSON types take the slow path).
    private static func scanSequence(_ scanner: inout JSONScanner) -> JSONValue? {
        if scanner.peek() == UInt8(ascii: "\"") {
            return scanner.simpleString().map { .string(String(decoding: $0, as: UTF8.self)) }
        }
        return scanner.number().map { .number(String(decoding: $0, as: UTF8.self)) }
    }
}

extension ChangesReply {
    /// The answers in one pass: `null`, `0`, or arrays of plain strings; nil for anything else.
    static func scanAnswers(_ body: ByteBuffer) -> [Answer]? {
        JSONScanner.scanArray(body, element: scanAnswer)
    }

    private static func scanAnswer(_ scanner: inout JSONScanner) -> Answer? {
        switch scanner.peek() {
        case UInt8(ascii: "["):
            _ = scanner.consume(UInt8(ascii: "["))
            var ancestors: [String] = []
            if scanner.consume(UInt8(ascii: "]")) { return .wanted(knownAncestors: ancestors) }
            repeat {
                guard let revID = scanner.simpleString() else { return nil }
                ancestors.append(String(decoding: revID, as: UTF8.self))
            } while scanner.consume(UInt8(ascii: ","))
            return scanner.consume(UInt8(ascii: "]")) ? .wanted(knownAncestors: ancestors) : nil
        case UInt8(ascii: "n"):
            return scanner.literal() == .null ? .notWanted : nil
        default:
            guard let token = scanner.number(),
                  token.elementsEqual("0".utf8) || token.elementsEqual("-0".utf8) else { return nil }
            return .notWanted
        }
    }
}
