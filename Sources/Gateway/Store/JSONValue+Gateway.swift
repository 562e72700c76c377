import BLIPCore
import NIOCore
import Replication

extension JSONValue {
    /// Parses JSON text with the Replication module's strict parser.
    ///
    /// That parser is not public, so this goes through the one typed view whose body is an
    /// arbitrary JSON value (a setCheckpoint request's). A bridge until Replication exposes
    /// `JSONValue(parsing:)`; keeping one parser means numbers keep their exact text.
    static func parse(_ buffer: ByteBuffer, what: String) throws(GatewayError) -> JSONValue {
        guard buffer.readableBytes > 0 else { throw .badRequest("\(what) is empty, not JSON") }
        let carrier = BLIPMessage.request(profile: ReplicationProfile.setCheckpoint.rawValue,
                                          properties: Properties([.client: "json"]), body: buffer)
        let typed = ReplicationMessage(carrier, context: MessageContext(maxJSONBodyBytes: Int.max))
        if case .setCheckpoint(let request) = typed.content, let body = request.body { return body }
        let detail = typed.violations.first.map { String(describing: $0) } ?? "not JSON"
        throw .badRequest("\(what) is not valid JSON: \(detail.replacingOccurrences(of: "setCheckpoint body", with: what))")
    }

    static func parse(_ text: String, what: String) throws(GatewayError) -> JSONValue {
        try parse(ByteBuffer(string: text), what: what)
    }

    /// Compact JSON bytes (object keys sorted), for message bodies and digests.
    var jsonBuffer: ByteBuffer { ByteBuffer(string: description) }


    /// A sequence number: a non-negative integer, or a string of one (Sync Gateway's older form).
    var sequenceNumber: UInt64? {
        switch self {
        case .number(let text): return UInt64(text)
        case .string(let text): return UInt64(text)
        default: return nil
        }
    }
}

extension ByteBuffer {
    /// True when the bytes contain `needle` (a byte search, so bodies need not be parsed to learn
    /// that they have no `_attachments` or `channels`).
    func contains(_ needle: String) -> Bool {
        let key = Array(needle.utf8)
        return withUnsafeReadableBytes { bytes in
            guard !key.isEmpty, bytes.count >= key.count else { return false }
            var index = 0
            let last = bytes.count - key.count
            while index <= last {
                if bytes[index] == key[0] {
                    var offset = 1
                    while offset < key.count, bytes[index + offset] == key[offset] { offset += 1 }
                    if offset == key.count { return true }
                }
                index += 1
            }
            return false
        }
    }
}
