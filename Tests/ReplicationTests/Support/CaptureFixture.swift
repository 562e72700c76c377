import BLIPCore
import Foundation
import NIOCore
import Testing
@testable import Replication

/// The go-blip capture (Tests/CaptureTests/Fixtures/goblip-session.pcap) as decoded BLIP events,
/// one JSON object per line: handshake, messages (properties in wire order, body in base64; the
/// `echo` bodies are left out and only sized), ACKs and closes.
struct CaptureFixture {
    enum Event {
        case handshake(subprotocol: String)
        case message(BLIPMessage, from: BLIPDirection, time: Double)
        case ack(AckInfo, from: BLIPDirection, time: Double)
        case close(code: Int, from: BLIPDirection, time: Double)
    }

    let events: [Event]

    static func load(_ name: String = "goblip-session") throws -> CaptureFixture {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "jsonl", subdirectory: "Fixtures"))
        let text = try String(contentsOf: url, encoding: .utf8)
        var events: [Event] = []
        for line in text.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let from: BLIPDirection = object["from"] as? String == "server" ? .serverToClient : .clientToServer
            let time = object["t"] as? Double ?? 0
            switch object["kind"] as? String {
            case "handshake":
                events.append(.handshake(subprotocol: object["subprotocol"] as? String ?? ""))
            case "msg":
                events.append(.message(try message(from: object), from: from, time: time))
            case "ack":
                let type: MessageType = object["type"] as? String == "ACKMSG" ? .ackRequest : .ackResponse
                let ack = AckInfo(type: type, number: UInt64(object["number"] as? Int ?? 0), bytes: UInt64(object["bytes"] as? Int ?? 0))
                events.append(.ack(ack, from: from, time: time))
            case "close":
                events.append(.close(code: object["code"] as? Int ?? 0, from: from, time: time))
            default:
                continue
            }
        }
        return CaptureFixture(events: events)
    }

    private static func message(from object: [String: Any]) throws -> BLIPMessage {
        let types: [String: MessageType] = ["MSG": .request, "RPY": .response, "ERR": .error]
        let type = try #require(types[object["type"] as? String ?? ""])
        let pairs = (object["props"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
        var body = ByteBuffer()
        if let base64 = object["body"] as? String, let data = Data(base64Encoded: base64) {
            body.writeBytes(data)
        }
        var message = BLIPMessage(type: type, number: UInt64(object["number"] as? Int ?? 0),
                                  flags: FrameFlags(rawValue: UInt8(object["flags"] as? Int ?? 0)),
                                  properties: Properties(pairs), body: body)
        message.frameCount = object["frames"] as? Int ?? 1
        message.wirePayloadBytes = object["wire"] as? Int ?? 0
        return message
    }

    /// Feeds every event to `analyzer`, returning what it said about each message.
    @discardableResult
    func replay(into analyzer: SessionAnalyzer) -> [AnalyzedMessage] {
        var analyzed: [AnalyzedMessage] = []
        for event in events {
            switch event {
            case .handshake(let subprotocol): analyzer.observeHandshake(subprotocol: subprotocol, user: nil, at: 0)
            case .message(let message, let from, let time): analyzed.append(analyzer.observe(message: message, from: from, at: time))
            case .ack(let ack, let from, let time): analyzer.observeAck(ack, from: from, at: time)
            case .close(let code, let from, let time): analyzer.observeClose(from: from, code: code, reason: "", at: time)
            }
        }
        return analyzed
    }
}
