import BLIPCore
import Foundation
import NIOCore
import Replication
@testable import WebView

/// A session told message by message to a ``SessionHistory`` (and its session's analyzer), the
/// way the relay tells it; time moves one second per message.
final class SessionScript {
    let history: SessionHistory
    let analyzer = SessionAnalyzer(connection: 1)
    let id: UInt64
    var time = 100.0

    init(limits: WebViewLimits = .default, id: UInt64 = 1, history: SessionHistory? = nil, correlationID: String? = nil) {
        self.history = history ?? SessionHistory(limits: limits)
        self.id = id
        self.history.open(SessionDescription(id: id, clientAddress: "127.0.0.1:5000", user: "alice", database: "db",
                                             upstream: "127.0.0.1:4984", subprotocol: "BLIP_3+CBMobile_3",
                                             startedWallClock: 1_700_000_000, correlationID: correlationID),
                          analyzer: analyzer, at: time)
    }

    var recording: SessionRecording { history.recording(id)! }

    @discardableResult
    func send(_ message: BLIPMessage, _ direction: BLIPDirection, roundTrip: Double? = nil) -> AnalyzedMessage {
        time += 1
        var message = message
        message.wirePayloadBytes = message.encodedStream().readableBytes
        let analysis = analyzer.observe(message: message, from: direction, at: time)
        history.append(sessionID: id, message, direction: direction, time: time,
                       profile: analysis.profile, analysis: analysis, roundTrip: roundTrip)
        return analysis
    }

    @discardableResult
    func client(_ message: BLIPMessage) -> AnalyzedMessage { send(message, .clientToServer) }
    @discardableResult
    func server(_ message: BLIPMessage) -> AnalyzedMessage { send(message, .serverToClient) }

    func close() { history.close(sessionID: id, reason: "client 1000", at: time + 1) }
}

func request(_ profile: String, _ number: MessageNumber, _ properties: [(String, String)] = [], body: String = "",
             noReply: Bool = false) -> BLIPMessage {
    var message = BLIPMessage.request(profile: profile, properties: Properties(properties),
                                      body: ByteBuffer(string: body), noReply: noReply)
    message.number = number
    return message
}

func reply(_ number: MessageNumber, _ properties: [(String, String)] = [], body: String = "") -> BLIPMessage {
    BLIPMessage(type: .response, number: number, properties: Properties(properties), body: ByteBuffer(string: body))
}

func errorReply(_ number: MessageNumber, code: Int, message: String = "") -> BLIPMessage {
    BLIPMessage.error(to: number, domain: "HTTP", code: code, message: message)
}

/// The JSON text as Foundation objects, for checking fields.
func object(_ json: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
}

import Testing

let revA1 = "1-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
let revA2 = "2-a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"
