import BLIPCore
import Foundation
import NIOCore
import ReplicationNames

extension InspectRecord {
    /// The record as one JSON object (keys sorted), with the fields tools rely on:
    /// `conn`, `from`, `time`, `type`, `number`, `compressed`, `urgent`, `noReply`, `properties`,
    /// `bodySize`, `bodySha1`, `frames`, `wireSize`; `bytes` for ACKs; `error` for problems.
    public func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "conn": connection,
            "from": direction == .clientToServer ? "client" : "server",
            "time": timestamp,
        ]
        switch kind {
        case .message(let message):
            object["type"] = message.type.description
            object["number"] = message.number
            object["compressed"] = message.isCompressed
            object["urgent"] = message.isUrgent
            object["noReply"] = message.isNoReply
            object["properties"] = Dictionary(PropertyRedaction.redact(message.properties).pairs.map { ($0.key, $0.value) }) { first, _ in first }
            object["bodySize"] = message.body.readableBytes
            object["bodySha1"] = bodySHA1
            object["frames"] = message.frameCount
            object["wireSize"] = message.wirePayloadBytes
            if let requestProfile { object["requestProfile"] = requestProfile }
            if let summary { object["summary"] = summary }
            if let roundTrip { object["rtt"] = roundTrip }
        case .ack(let ack):
            object["type"] = ack.type.description
            object["number"] = ack.number
            object["bytes"] = ack.bytes
        case .frame(let number, let flags, let wireBytes):
            object["type"] = "FRAME"
            object["messageType"] = flags.type?.description ?? "?"
            object["number"] = number
            object["wireSize"] = wireBytes
            object["compressed"] = flags.isCompressed
        case .close(let code, let reason):
            object["type"] = "CLOSE"
            if let code { object["code"] = Int(code) }
            object["reason"] = reason
        case .error(let message, let frame, let fatal):
            object["error"] = message
            object["frame"] = frame
            object["fatal"] = fatal
        }
        return object
    }

    /// The record as one JSON line.
    public func jsonLine() -> String {
        let data = (try? JSONSerialization.data(withJSONObject: jsonObject(), options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The record as one human line: time, connection, direction, type#number, flags, profile
    /// and other properties, body size on the wire and uncompressed, and a body preview.
    public func textLine(previewLength: Int = 60) -> String {
        let arrow = direction == .clientToServer ? "C→S" : "S→C"
        let head = "\(Self.clock(timestamp)) #\(connection) \(arrow)"
        switch kind {
        case .message(let message):
            var flags = message.flags
            flags.hasMoreComing = false
            var line = "\(head) \(message.type)#\(message.number) \(flags)"
            if let summary { line += " \(summary)" } else if let profile = message.profile { line += " \(profile)" }
            let others = PropertyRedaction.redact(message.properties).pairs.filter { $0.key != PropertyName.profile.rawValue }
            if !others.isEmpty { line += " {" + others.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + "}" }
            if let requestProfile, summary == nil { line += " ↩\(requestProfile)" }
            if let roundTrip { line += String(format: " rtt=%.1fms", roundTrip * 1000) }
            line += " wire \(message.wirePayloadBytes)B body \(message.body.readableBytes)B"
            if message.frameCount > 1 { line += " in \(message.frameCount) frames" }
            let preview = Self.preview(message.body, length: previewLength)
            if !preview.isEmpty { line += " " + preview }
            return line
        case .ack(let ack):
            return "\(head) \(ack.type)#\(ack.number) \(ack.bytes) bytes"
        case .frame(let number, let flags, let wireBytes):
            return "\(head) frame of \(flags.type?.description ?? "?")#\(number) \(flags) wire \(wireBytes)B"
        case .close(let code, let reason):
            return "\(head) CLOSE \(code.map(String.init) ?? "-") \(reason)"
        case .error(let message, _, let fatal):
            return "\(head) \(fatal ? "ERROR" : "WARNING") \(message)"
        }
    }

    public static func clock(_ timestamp: Double) -> String {
        let seconds = Int(timestamp)
        let micros = Int((timestamp - Double(seconds)) * 1_000_000)
        return String(format: "%02d:%02d:%02d.%06d", (seconds / 3600) % 24, (seconds / 60) % 60, seconds % 60, micros)
    }

    /// Printable ASCII of the body's start, other bytes as `.`; empty for an empty body.
    static func preview(_ body: ByteBuffer, length: Int) -> String {
        guard body.readableBytes > 0 else { return "" }
        let bytes = body.getBytes(at: body.readerIndex, length: min(length, body.readableBytes)) ?? []
        let text = String(bytes.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
        return body.readableBytes > length ? text + "…" : text
    }
}
