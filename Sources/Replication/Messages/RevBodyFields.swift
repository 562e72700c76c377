import NIOCore

/// What a rev reads from its body: `_id`, `_rev`, `_deleted` and the `_attachments` value.
///
/// ``scan(_:)`` gets them in one validating pass over the bytes, parsing only the
/// `_attachments` value into a tree, so a revision's (possibly large) body is never built as
/// one. It answers nil for anything it does not handle (a body that is not an object, keys
/// with escapes, `_id` with escapes, a non-integer `_deleted` number, invalid JSON); the rev
/// then parses the body with ``JSONParser`` as before and reports what is wrong.
struct RevBodyFields {
    var id: String?
    var rev: String?
    var deleted = false
    var attachments: JSONValue?

    static func scan(_ body: ByteBuffer) -> RevBodyFields? {
        body.withUnsafeReadableBytes { bytes -> RevBodyFields? in
            var scanner = JSONScanner(bytes)
            guard scanner.consume(UInt8(ascii: "{")) else { return nil }
            var fields = RevBodyFields()
            var attachmentsRange: Range<Int>?
            if !scanner.consume(UInt8(ascii: "}")) {
                repeat {
                    // Members are read in order; like the parser's dictionary, a repeated key's last value counts.
                    guard let key = scanner.simpleString(), scanner.consume(UInt8(ascii: ":")) else { return nil }
                    if key.matches("_id") || key.matches("_rev") {
                        guard let value = scanStringOrOther(&scanner) else { return nil }
                        if key.matches("_id") { fields.id = value.string } else { fields.rev = value.string }
                    } else if key.matches("_deleted") {
                        guard let truthy = scanner.truthiness(depth: 1) else { return nil }
                        fields.deleted = truthy
                    } else if key.matches("_attachments") {
                        let start = scanner.nextTokenOffset
                        guard scanner.skipValue(depth: 1) else { return nil }
                        attachmentsRange = start..<scanner.endOffset
                    } else {
                        guard scanner.skipValue(depth: 1) else { return nil }
                    }
                } while scanner.consume(UInt8(ascii: ","))
                guard scanner.consume(UInt8(ascii: "}")) else { return nil }
            }
            guard scanner.isAtEnd else { return nil }
            if let range = attachmentsRange {
                // Already validated as part of the whole body, so this parse succeeds.
                guard let value = try? JSONParser.parse(bytes: UnsafeRawBufferPointer(rebasing: bytes[range])) else { return nil }
                fields.attachments = value
            }
            return fields
        }
    }

    /// A member value read for its text: a plain string's, or nil for any other valid value
    /// (skipped). Nil overall for a string with escapes or invalid JSON.
    private static func scanStringOrOther(_ scanner: inout JSONScanner) -> MemberText? {
        if scanner.peek() == UInt8(ascii: "\"") {
            guard let text = scanner.simpleString() else { return nil }
            return MemberText(string: String(decoding: text, as: UTF8.self))
        }
        return scanner.skipValue(depth: 1) ? MemberText(string: nil) : nil
    }

    private struct MemberText {
        var string: String?
    }
}
