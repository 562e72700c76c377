import BLIPCore
import NIOCore

/// Brings record bodies written by older versions up to ``CaptureFileFormat/recordVersion``,
/// one version step at a time, so a decoder only ever knows the current layout.
///
/// Each step rewrites a body of version `n` into the layout of version `n + 1`. Adding version 3
/// means adding one step and leaving the others alone.
enum CaptureRecordMigration {
    /// The body of a record of `kind` written at `version`, rewritten for the current version.
    static func migrate(
        kind: CaptureRecord.Kind, version: Int, body: ByteBuffer, offset: Int64
    ) throws -> ByteBuffer {
        var body = body
        var version = version
        while version < Int(CaptureFileFormat.recordVersion) {
            switch version {
            case 1: body = try upgradeFrom1(kind: kind, body: body, offset: offset)
            default: preconditionFailure("no migration step from record version \(version)")
            }
            version += 1
        }
        return body
    }

    /// Version 1 → 2: a frame gains its leg (version 1 had only pass-through, so `both`);
    /// a handshake gains the chosen sub-protocol, taken from the response's
    /// `Sec-WebSocket-Protocol` header that version 1 already stored.
    private static func upgradeFrom1(kind: CaptureRecord.Kind, body: ByteBuffer, offset: Int64) throws -> ByteBuffer {
        switch kind {
        case .frame:
            var reader = RecordBodyReader(buffer: body, offset: offset)
            let time = try reader.time()
            let direction = try reader.direction()
            let bytes = try reader.bytes()
            var upgraded = ByteBuffer()
            upgraded.writeCaptureTime(time)
            upgraded.writeInteger(UInt8(direction.rawValue))
            upgraded.writeInteger(CaptureLeg.both.rawValue)
            upgraded.writeCaptureVarint(UInt64(bytes.readableBytes))
            upgraded.writeImmutableBuffer(bytes)
            return upgraded
        case .handshake:
            var reader = RecordBodyReader(buffer: body, offset: offset)
            _ = try reader.time()
            _ = try reader.varint()
            _ = try reader.string()
            _ = try reader.string()
            _ = try reader.headers()
            _ = try reader.string()
            _ = try reader.varint()
            _ = try reader.string()
            let responseHeaders = try reader.headers()
            var upgraded = body
            let subprotocol = responseHeaders.listValues(for: "Sec-WebSocket-Protocol").first
            upgraded.writeInteger(UInt8(subprotocol == nil ? 0 : 1))
            if let subprotocol { upgraded.writeCaptureString(subprotocol) }
            return upgraded
        default:
            return body
        }
    }
}
