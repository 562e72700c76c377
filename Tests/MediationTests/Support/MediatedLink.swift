import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore

/// A policy driven by closures: the test decides per message.
final class ScriptedPolicy: MediationPolicy {
    var onHead: (MediatedHead) -> HeadDecision
    var onBody: (BLIPMessage, MediatedHead) -> BodyDecision
    /// A paced frame's hold (bytes, direction, rate); nil: its own transfer time alone.
    var onTransfer: ((Int, BLIPDirection, Int) -> TimeAmount)?

    init(onHead: @escaping (MediatedHead) -> HeadDecision = { _ in .pass },
         onBody: @escaping (BLIPMessage, MediatedHead) -> BodyDecision = { _, _ in .pass }) {
        self.onHead = onHead
        self.onBody = onBody
    }

    func decide(head: MediatedHead) -> HeadDecision { onHead(head) }
    func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision { onBody(body, head) }
    func transferTime(of bytes: Int, travelling direction: BLIPDirection, bytesPerSecond: Int) -> TimeAmount {
        onTransfer?(bytes, direction, bytesPerSecond) ?? .nanoseconds(Int64(bytes) * 1_000_000_000 / Int64(bytesPerSecond))
    }

    /// Denies the client's requests with these numbers (as the client numbered them).
    static func denying(client numbers: Set<MessageNumber>, code: Int = 403) -> ScriptedPolicy {
        ScriptedPolicy(onHead: { head in
            head.direction == .clientToServer && head.type == .request && numbers.contains(head.number)
                ? .deny(ErrorReply(code: code, message: "denied by test"), rule: "test-deny") : .pass
        })
    }
}

/// Passes every message and withholds every ACK travelling to the client for two seconds.
final class ServerAckHoldingPolicy: MediationPolicy {
    func decide(head: MediatedHead) -> HeadDecision { .pass }
    func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision { .pass }
    func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount? {
        direction == .serverToClient ? .seconds(2) : nil
    }
}

/// A client endpoint and a server endpoint with a ``SessionMediator`` between them, all pure:
/// every frame the mediator sends is received by a real ``BLIPEndpoint``, so numbers, checksums
/// and deflate are checked exactly as a peer checks them.
final class MediatedLink {
    let client = BLIPEndpoint()
    let server = BLIPEndpoint()
    let mediator: SessionMediator
    /// Messages completed at each end, in order.
    private(set) var serverReceived: [BLIPMessage] = []
    private(set) var clientReceived: [BLIPMessage] = []
    /// Every output the mediator gave, with the direction of the frame that caused it.
    private(set) var outputs: [(direction: BLIPDirection, output: MediatorOutput)] = []
    /// Every timer the mediator armed, in order.
    private(set) var timers: [MediationTimer] = []
    /// The timers not fired yet, with when each is due on the link's clock.
    private(set) var armed: [(timer: MediationTimer, due: NIODeadline)] = []
    /// The link's clock: it stands still but for ``fire(_:)``, which moves it to the timer's time.
    private(set) var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
    /// ACK frames each end received.
    private(set) var acksReceivedByClient = 0
    private(set) var acksReceivedByServer = 0
    /// Frames each end wrote.
    private(set) var framesSentByClient = 0
    var answerServerRequests = true
    /// When set, the link plays a shell whose observers read no bodies but this preview: every
    /// ``MediatorOutput/unreadBody`` is passed back with ``SessionMediator/stopKeepingBody(_:keepingFirst:)``.
    var unreadBodyPreview: Int?
    /// The most the decoders held after any frame (``SessionMediator/bytesInProgress``).
    private(set) var peakBytesInProgress = 0

    init(policy: any MediationPolicy, limits: MediationLimits = .default) {
        mediator = SessionMediator(policy: policy, limits: limits)
    }

    var reports: [MediationReport] { outputs.flatMap { $0.output.reports } }

    /// The client sends one frame, if it has one; the relay's output is delivered. False when idle.
    @discardableResult
    func clientStep() throws -> Bool {
        guard let frame = try client.nextFrame() else { return false }
        framesSentByClient += 1
        try relay(frame.bytes, .clientToServer)
        return true
    }

    @discardableResult
    func serverStep() throws -> Bool {
        guard let frame = try server.nextFrame() else { return false }
        try relay(frame.bytes, .serverToClient)
        return true
    }

    /// Moves frames both ways until both ends are idle.
    func pump() throws {
        var progressed = true
        while progressed {
            let a = try clientStep()
            let b = try serverStep()
            progressed = a || b
        }
    }

    /// Fires `timer`: the link's clock moves on to when it is due (if it is not there yet).
    func fire(_ timer: MediationTimer) throws {
        if let index = armed.firstIndex(where: { $0.timer == timer }) {
            now = max(now, armed[index].due)
            armed.remove(at: index)
        }
        let output = try mediator.timerFired(timer.token, now: now)
        arm(output.timers)
        try deliver(output, original: nil, from: nil)
    }

    /// Fires the armed timers in the order they are due, those they arm included, until none is left.
    func fireAll() throws {
        while let next = armed.min(by: { $0.due < $1.due }) { try fire(next.timer) }
    }

    private func arm(_ new: [MediationTimer]) {
        timers += new
        armed += new.map { ($0, now + $0.delay) }
    }

    private func relay(_ bytes: ByteBuffer, _ direction: BLIPDirection) throws {
        let output = try mediator.receive(bytes, travelling: direction, now: now)
        if let unread = output.unreadBody, let preview = unreadBodyPreview {
            mediator.stopKeepingBody(unread, keepingFirst: preview)
        }
        peakBytesInProgress = max(peakBytesInProgress, mediator.bytesInProgress)
        outputs.append((direction, output))
        arm(output.timers)
        try deliver(output, original: bytes, from: direction)
    }

    private func deliver(_ output: MediatorOutput, original: ByteBuffer?, from: BLIPDirection?) throws {
        for send in output.sends {
            let bytes: ByteBuffer
            switch send.payload {
            case .original: bytes = original!
            case .bytes(let built): bytes = built
            }
            let target = send.direction == .clientToServer ? server : client
            let decoded = try target.receive(bytes)
            if case .ack = decoded.outcome {
                if target === client { acksReceivedByClient += 1 } else { acksReceivedByServer += 1 }
            }
            guard let message = decoded.message else { continue }
            if target === server {
                serverReceived.append(message)
                if message.type == .request, !message.isNoReply, answerServerRequests {
                    server.send(reply: BLIPMessage.reply(to: message, properties: ["seq": message.properties["seq"] ?? ""]))
                }
            } else {
                clientReceived.append(message)
            }
        }
    }
}

extension MediatedLink {
    /// Queues a small request from the client tagged with `seq`.
    @discardableResult
    func clientRequest(_ seq: Int, profile: String = "test", body: String = "", compressed: Bool = false,
                       noReply: Bool = false) -> MessageNumber {
        client.send(request: .request(profile: profile, properties: ["seq": String(seq)], body: ByteBuffer(string: body),
                                      compressed: compressed, noReply: noReply))
    }
}

/// `size` bytes of text that deflate shortens, with random numbers so that every frame differs.
func compressibleText(_ size: Int, seed: UInt64, tag: String = "w") -> ByteBuffer {
    var random = SeededRandom(seed: seed)
    var text = ""
    while text.utf8.count < size { text += "\(tag)\(random.next() % 100_000)," }
    return ByteBuffer(string: String(text.prefix(size)))
}
