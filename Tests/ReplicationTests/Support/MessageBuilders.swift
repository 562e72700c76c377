import BLIPCore
import NIOCore
@testable import Replication

/// Hand-made messages as the seeds spell them: a profile, properties, a JSON body.
func request(_ profile: String, _ number: MessageNumber, _ properties: [(String, String)] = [], body: String = "",
             noReply: Bool = false) -> BLIPMessage {
    var message = BLIPMessage.request(profile: profile, properties: Properties(properties), body: bytes(body), noReply: noReply)
    message.number = number
    return message
}

func reply(_ number: MessageNumber, _ properties: [(String, String)] = [], body: String = "") -> BLIPMessage {
    BLIPMessage(type: .response, number: number, properties: Properties(properties), body: bytes(body))
}

func errorReply(_ number: MessageNumber, domain: String = "HTTP", code: Int, message: String = "") -> BLIPMessage {
    BLIPMessage.error(to: number, domain: domain, code: code, message: message)
}

func bytes(_ text: String) -> ByteBuffer {
    var buffer = ByteBuffer()
    buffer.writeString(text)
    return buffer
}

/// Types a request, then its reply as answering it.
func exchange(_ sent: BLIPMessage, _ answer: BLIPMessage, context: MessageContext = MessageContext())
    -> (request: ReplicationMessage, reply: ReplicationMessage) {
    let typedRequest = ReplicationMessage(sent, context: context)
    return (typedRequest, ReplicationMessage(answer, answering: typedRequest, context: context))
}

let revA1 = "1-00000000000000000000000000000001"
let revA2 = "2-0000000000000000000000000000000a"
let revA3 = "3-a1b2c3d4e5f60718293a4b5c6d7e8f90"

/// A session driven like a script: `client(…)`, `server(…)`, with time advancing explicitly.
final class Script {
    let analyzer: SessionAnalyzer
    var now: Double = 0

    init(connection: Int = 0, limits: AnalyzerLimits = .default, registry: CheckpointRegistry? = nil) {
        analyzer = SessionAnalyzer(connection: connection, limits: limits, registry: registry)
    }

    @discardableResult
    func client(_ message: BLIPMessage, after seconds: Double = 0.01) -> AnalyzedMessage {
        now += seconds
        return analyzer.observe(message: message, from: .clientToServer, at: now)
    }

    @discardableResult
    func server(_ message: BLIPMessage, after seconds: Double = 0.01) -> AnalyzedMessage {
        now += seconds
        return analyzer.observe(message: message, from: .serverToClient, at: now)
    }

    func stuck(after seconds: Double) -> [Finding] { analyzer.stuckFindings(now: now + seconds) }
}
