import BLIPCore
import BLIPNIO
import NIOCore

/// One echo session through the relay: connects, sends its numbered requests of its kind with
/// `kind.inFlight` unanswered at a time, checks every reply (its number, its body, its order
/// among the server's replies), closes cleanly, and adds what the echo server saw of its requests.
/// All the sending and checking runs on the connection's event loop, with no task hops.
struct SoakEchoSession: Sendable {
    let id: UInt64
    let kind: SessionKind
    let messages: Int
    let bodies: SoakBodies
    let numberLimit: UInt64
    let timeout: TimeAmount

    /// Runs the session against the relay on `port`; never throws: a failure is in the tally.
    func run(port: Int, echo: SoakEchoServer, progress: SoakProgress, group: EventLoopGroup,
             onWarmUp: @escaping @Sendable () -> Void) async -> SessionTally {
        var tally = SessionTally()
        tally.echoSessions = 1
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = port
        configuration.path = "/soak/_blipsync"
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        guard let outcome = try? await BLIPWebSocketClient.connect(configuration, group: group),
              let connection = outcome.connection else {
            tally.failedSessions = 1
            return tally
        }
        let loop = connection.channel.eventLoop
        let finished = loop.makePromise(of: SessionTally.self)
        let session = self
        do {
            try await connection.onLoop { handler in
                EchoPump(session: session, progress: progress, onWarmUp: onWarmUp, promise: finished).start(handler)
            }
        } catch {
            finished.succeed(tally)
        }
        tally = (try? await finished.futureResult.get()) ?? tally
        // A clean close: 1000 both ways through the relay, within the timeout.
        let deadline = loop.scheduleTask(in: timeout) { connection.channel.close(promise: nil) }
        try? await connection.close()
        let close = try? await connection.closed.get()
        deadline.cancel()
        if close?.code != 1000 || close?.abrupt != false { tally.failedSessions = 1 }
        return tally + echo.finish(session: id)
    }
}

/// The sending and checking of one echo session, confined to its connection's event loop.
private final class EchoPump {
    let session: SoakEchoSession
    let progress: SoakProgress
    let onWarmUp: @Sendable () -> Void
    let promise: EventLoopPromise<SessionTally>
    var random: SoakRandom
    var sent = 0
    var answered = 0
    var replies: ArrivalOrder
    var tally = SessionTally()
    var over = false

    init(session: SoakEchoSession, progress: SoakProgress, onWarmUp: @escaping @Sendable () -> Void,
         promise: EventLoopPromise<SessionTally>) {
        self.session = session
        self.progress = progress
        self.onWarmUp = onWarmUp
        self.promise = promise
        random = SoakRandom(seed: SoakRandom.mix(session.id))
        replies = ArrivalOrder(limit: session.numberLimit)
        tally.echoSessions = 1
    }

    func start(_ handler: BLIPChannelHandler) {
        guard session.messages > 0 else { return finish() }
        for _ in 0..<min(session.kind.inFlight, session.messages) { sendNext(handler) }
        watch(handler, answeredBefore: -1)
    }

    /// A session with no reply for a whole ``SoakEchoSession/timeout`` is stuck: its connection is
    /// closed, which fails what is unanswered (lost) and the session.
    private func watch(_ handler: BLIPChannelHandler, answeredBefore: Int) {
        guard !over else { return }
        guard answered != answeredBefore else {
            handler.close(code: 1011, reason: "soak: no reply for too long")
            return
        }
        let answered = self.answered
        promise.futureResult.eventLoop.assumeIsolated().scheduleTask(in: session.timeout) {
            self.watch(handler, answeredBefore: answered)
        }
    }

    private func sendNext(_ handler: BLIPChannelHandler) {
        guard !over, sent < session.messages else { return }
        sent += 1
        let number = UInt64(sent)
        let kind = session.kind
        let length = random.logUniform(kind.sizes)
        let compressed = kind.compression == .always || (kind.compression == .half && random.next() & 1 == 0)
        let pool: SoakBodies.Pool = switch kind.content {
        case .json: .json
        case .noise: .noise
        case .either: random.next() & 2 == 0 ? .json : .noise
        }
        let body = session.bodies.body(session: session.id, number: number, length: length, pool: pool)
        let request = BLIPMessage.request(profile: kind.profile,
                                          properties: [SoakProperty.session: String(session.id), SoakProperty.number: String(number),
                                                       SoakProperty.length: String(length), SoakProperty.pool: pool.rawValue],
                                          body: body, compressed: compressed)
        handler.sendRequest(request).assumeIsolated().whenComplete { result in
            switch result {
            case .failure:
                self.finish()
            case .success(let reply):
                self.check(reply, number: number, body: body)
                if self.answered == self.session.messages { self.finish() } else { self.sendNext(handler) }
            }
        }
    }

    private func check(_ reply: BLIPMessage, number: UInt64, body: ByteBuffer) {
        answered += 1
        if progress.echoedOne() { onWarmUp() }
        guard reply.type == .response else {
            tally.errorReplies += 1
            return
        }
        guard let replyNumber = reply.properties[SoakProperty.replyNumber].flatMap(UInt64.init),
              reply.properties[SoakProperty.number] == String(number), reply.body == body else {
            tally.corrupted += 1
            return
        }
        replies.arrived(replyNumber, singleFrame: reply.frameCount == 1)
        tally.echoed += 1
    }

    /// Ends the pump once: every reply in, or the connection gone (what is unanswered is lost).
    private func finish() {
        guard !over else { return }
        over = true
        tally.sent = sent
        tally.lost = sent - answered
        if sent < session.messages || answered < sent { tally.failedSessions = 1 }
        tally.add(replies)
        promise.succeed(tally)
    }
}
