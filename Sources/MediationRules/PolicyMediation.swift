import BLIPCore
import Foundation
import Mediation
import NIOCore
import Policy
import Replication
import ReplicationNames

/// One session's bridge from the policy file's message rules (``PolicyEngine``) to the byte-level
/// ``SessionMediator``: builds each message's ``MessageFacts``, asks the engine in force (a reload
/// applies to the next message) and turns its verdicts into head and body decisions.
///
/// - `deny`, `errorReply`, `drop`, `delay`, `filterChanges` become mediator decisions directly.
/// - `replyLatency` delays the reply to the matched request; `bandwidth` paces the message (each
///   frame held for its size ÷ rate after the matched frames before it in its direction,
///   ``BandwidthPipe``), or, when a body rule holds it whole anyway, holds it for its whole size;
///   `withholdAcks` holds every ACK going back to the message's sender for the given time.
/// - `close` asks for the end of the session with its code (1006: a TCP drop without CLOSE),
///   after the message is forwarded when the rule counts (`afterMessages`/`afterBytes`).
/// - Dry-run verdicts do nothing and are reported as `dry-run …`.
///
/// What it decides beside a message's fate (those reports, a close) travels back with the
/// decision (``HeadDecision/asides``): the mediator moves it into its output, and nothing calls
/// back into the session.
///
/// Rules with body keys (sizes, attachments) make the relay hold the message until it is
/// complete and ask those rules again with the body known; the other rules act at the head and
/// see each message once.
///
/// Collections: the relay learns the session's `getCollections` list (the request body is read
/// once) so that `collection: scope.name` matches messages carrying a `collection` index.
///
/// Event-loop confined, like the session that owns it.
public final class PolicyMediation: MediationPolicy {
    private let store: PolicyStore
    /// Who the session is; the sub-protocol is filled in once the upstream has chosen it.
    public var session: SessionFacts
    /// The engine whose per-session counters to release when the session ends.
    public var engine: PolicyEngine { store.engine }
    /// Verdicts the mediator does not carry out (dry runs, closes, reply latency, ACK holds) and
    /// the close a `close` verdict asks for, decided during the current question: handed back
    /// with its answer. Bounded by one message's verdicts (a verdict per rule of the policy).
    private var asides = VerdictAsides()
    /// Requests whose reply is to be held: key = request direction and number.
    private var replyDelays: [ReplyKey: TimeAmount] = [:]
    /// ACKs travelling in a direction are held until this time (per `BLIPDirection.rawValue`).
    private var ackHoldUntil: [NIODeadline?] = [nil, nil]
    /// Per direction, the link the `bandwidth` action shapes.
    private var bandwidthPipes = [BandwidthPipe(), BandwidthPipe()]
    /// `scope.collection` by the index the session's `getCollections` gave it.
    private var collections: [String] = []
    /// Messages held for their body, with what the head evaluation decided for the body stage.
    private var pendingBody: [ReplyKey: PendingBody] = [:]

    private struct ReplyKey: Hashable {
        var direction: BLIPDirection
        var number: MessageNumber
        var isRequest: Bool
    }

    private enum PendingBody {
        /// Consult the rules with body keys, with the body known; `then` is what the other rules
        /// decided at the head (a delay, or nothing).
        case evaluate(then: HeadDecision)
        /// Filter the changes list's entries whose document ID matches.
        case filterChanges(TextPattern, rule: String)
        /// Learn the collection names.
        case collections
    }

    /// The policy's clock (``RelayConfiguration/policyClock``).
    private let clock: @Sendable () -> UInt64

    public init(store: PolicyStore, session: SessionFacts, clock: @escaping @Sendable () -> UInt64 = PolicyClock.now) {
        self.store = store
        self.session = session
        self.clock = clock
    }

    /// Now on the policy's clock, as a deadline for the holds it times (bandwidth, withheld ACKs).
    private var now: NIODeadline { .uptimeNanoseconds(clock()) }

    // MARK: MediationPolicy

    public func decide(head: MediatedHead) -> HeadDecision {
        var decision = decideHead(head)
        decision.asides = takeAsides()
        return decision
    }

    public func decide(body message: BLIPMessage, head: MediatedHead) -> BodyDecision {
        var decision = decideBody(message, head: head)
        decision.asides = takeAsides()
        return decision
    }

    private func decideHead(_ head: MediatedHead) -> HeadDecision {
        let key = ReplyKey(direction: head.direction, number: head.number, isRequest: head.type == .request)
        if head.type.isReply, !replyDelays.isEmpty,
           let delay = replyDelays.removeValue(forKey: ReplyKey(direction: head.direction.reversed,
                                                                number: head.number, isRequest: true)) {
            return .delay(delay, rule: nil)
        }
        if head.type == .request, head.direction == .clientToServer, Self.isGetCollections(head.properties) {
            pendingBody[key] = .collections  // evaluated once, at the body stage
            return .awaitBody()
        }
        let verdicts = store.engine.evaluate(facts(head, bodySize: nil), session: session, now: clock())
        if verdicts.isEmpty { return .pass }
        let decision = apply(verdicts, head: head, key: key)
        guard verdicts.needsBody else { return decision }
        switch decision.action {
        case .pass, .delay, .pace:
            pendingBody[key] = .evaluate(then: decision)
            return .awaitBody(rule: decision.rule)
        case .deny, .drop, .awaitBody:
            return decision  // refused already, or waiting for its body anyway
        }
    }

    private func decideBody(_ message: BLIPMessage, head: MediatedHead) -> BodyDecision {
        let key = ReplyKey(direction: head.direction, number: head.number, isRequest: head.type == .request)
        switch pendingBody.removeValue(forKey: key) {
        case .collections:
            learnCollections(message.body)
            let verdicts = store.engine.evaluate(facts(head, bodySize: message.body.readableBytes),
                                                 session: session, now: clock())
            return verdicts.isEmpty ? .pass : bodyDecision(apply(verdicts, head: head, key: key), message: message, head: head)
        case .filterChanges(let pattern, let rule):
            return ChangesFilter.decision(for: message, rule: rule) { !pattern.matches($0) }
        case .evaluate(let headDecision):
            var facts = facts(head, bodySize: message.body.readableBytes)
            facts.attachments = Self.attachments(of: message)
            let verdicts = store.engine.evaluate(facts, session: session, now: clock(), bodyRulesOnly: true)
            let decision = verdicts.isEmpty ? HeadDecision.pass : apply(verdicts, head: head, key: key)
            if case .pass = decision.action { return bodyDecision(headDecision, message: message, head: head) }
            return bodyDecision(decision, message: message, head: head)
        case nil:
            return .pass
        }
    }

    /// The `bandwidth` action's frames take turns on their direction's link.
    public func transferTime(of bytes: Int, travelling direction: BLIPDirection, bytesPerSecond: Int) -> TimeAmount {
        bandwidthPipes[direction.rawValue].hold(bytes: bytes, bytesPerSecond: bytesPerSecond, now: now)
    }

    public func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount? {
        guard let until = ackHoldUntil[direction.rawValue] else { return nil }
        let now = self.now
        guard until > now else {
            ackHoldUntil[direction.rawValue] = nil
            return nil
        }
        return until - now
    }

    // MARK: verdicts

    /// What was decided beside the message during this question, handed back with its answer.
    private func takeAsides() -> VerdictAsides {
        defer { asides = VerdictAsides() }
        return asides
    }

    /// Carries out the enforced verdicts (in rule order, up to the first that stops the message)
    /// and reports the dry-run ones. Each action's kind of intervention is named once, here.
    private func apply(_ verdicts: PolicyVerdicts, head: MediatedHead, key: ReplyKey) -> HeadDecision {
        var decision = HeadDecision.pass
        var delay: TimeAmount?
        for verdict in verdicts.verdicts {
            let enforced = !verdict.dryRun
            let kind: VerdictKind
            switch verdict.action {
            case .deny(let reply):
                kind = .deny
                if enforced { return .deny(reply, rule: verdict.rule, kind: kind) }
            case .errorReply(let reply):
                kind = .fault
                if enforced { return .deny(reply, rule: verdict.rule, kind: kind) }
            case .drop:
                kind = .drop
                if enforced { return .drop(rule: verdict.rule) }
            case .filterChanges(let pattern):
                kind = .modify
                if enforced {
                    pendingBody[key] = .filterChanges(pattern, rule: verdict.rule)
                    decision = .awaitBody(rule: verdict.rule)
                }
            case .delay(let nanoseconds):
                kind = .delay
                if enforced {
                    delay = max(delay ?? .zero, .nanoseconds(Int64(nanoseconds)))
                    decision = .delay(delay!, rule: verdict.rule, rateLimited: verdict.fromRateLimit)
                }
            case .replyLatency(let nanoseconds):
                kind = .fault
                if enforced {
                    replyDelays[ReplyKey(direction: head.direction, number: head.number, isRequest: true)] =
                        .nanoseconds(Int64(nanoseconds))
                    report(head, verdict, kind: kind)
                }
            case .withholdAcks(let nanoseconds):
                kind = .fault
                if enforced {
                    ackHoldUntil[head.direction.reversed.rawValue] = now + .nanoseconds(Int64(nanoseconds))
                    report(head, verdict, kind: kind)
                }
            case .bandwidth(let rate):
                kind = .fault
                if enforced, case .pass = decision.action {
                    decision = .pace(bytesPerSecond: rate, rule: verdict.rule, kind: kind)
                }
            case .close(let code, let reason, let afterForwarding):
                kind = .fault
                if enforced {
                    report(head, verdict, kind: kind)
                    if asides.close == nil { asides.close = SessionCloseRequest(code: code, reason: reason) }
                    if !afterForwarding { return .drop(rule: verdict.rule) }
                }
            }
            if !enforced { report(head, verdict, kind: kind, dryRun: true) }
        }
        return decision
    }

    /// A head decision taken at the body stage, as a body decision.
    private func bodyDecision(_ head: HeadDecision, message: BLIPMessage, head mediated: MediatedHead) -> BodyDecision {
        switch head.action {
        case .pass: return BodyDecision(.pass, rule: head.rule)
        case .deny(let reply): return BodyDecision(.deny(reply), rule: head.rule)
        case .drop: return BodyDecision(.drop, rule: head.rule)
        case .delay(let amount): return BodyDecision(.delay(amount), rule: head.rule)
        case .pace(let rate):
            // A body rule held the message whole: it takes the link for its whole size at once.
            let bytes = message.properties.encodedSize + message.body.readableBytes
            return BodyDecision(.delay(transferTime(of: bytes, travelling: mediated.direction, bytesPerSecond: rate)),
                                ruling: head.ruling)
        case .awaitBody:
            // filterChanges chosen with the body already here: decide now.
            return decideBody(message, head: mediated)
        }
    }

    /// Reports a verdict the mediator does not carry out itself (reply latency, held ACKs,
    /// closes, dry runs), with its rule's kind.
    private func report(_ head: MediatedHead, _ verdict: PolicyVerdict, kind: VerdictKind, dryRun: Bool = false) {
        asides.reports.append(MediationReport(direction: head.direction, number: head.number, type: head.type,
                                              profile: head.profile, rule: verdict.rule,
                                              action: dryRun ? "dry-run \(verdict.action)" : "\(verdict.action)",
                                              kind: kind, dryRun: dryRun))
    }

    // MARK: facts

    /// Whether the request is `getCollections`, read from the raw properties (no string made).
    private static func isGetCollections(_ properties: Properties) -> Bool {
        var found = false
        properties.forEachRawPair { key, value in
            guard PropertyName.matching(key) == .profile else { return true }
            found = ReplicationProfile(utf8: value) == .getCollections
            return false
        }
        return found
    }

    private func facts(_ head: MediatedHead, bodySize: Int?) -> MessageFacts {
        var collection: String?
        if !collections.isEmpty, let index = head.properties[.collection].flatMap(Int.init),
           collections.indices.contains(index) {
            collection = collections[index]
        }
        return MessageFacts(direction: head.direction, type: head.type, number: head.number,
                            noReply: head.flags.isNoReply, properties: head.properties, collection: collection,
                            bodySize: bodySize, requestProfile: head.requestProfile)
    }

    /// `getCollections` body: `{"collections": ["scope.name" or "name", …], …}` (default scope when
    /// the scope is left out).
    private func learnCollections(_ body: ByteBuffer) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
              let names = object["collections"] as? [String] else { return }
        collections = names.map { $0.contains(".") ? $0 : "_default.\($0)" }
    }

    /// The attachments a `rev` or `putRev` body refers to, `_attachments` entries and Couchbase
    /// Lite 3.x blob dictionaries alike (``DocumentBlobs``): content type and length of each.
    static func attachments(of message: BLIPMessage) -> [AttachmentFacts]? {
        guard let profile = message.properties.profile.flatMap(ReplicationProfile.init(rawValue:)), profile == .rev || profile == .putRev,
              message.body.readableBytes > 0,
              RevMessage.mentionsAttachments(message.body) || RevMessage.mentionsBlobs(message.body),
              let body = JSONValue(parsing: message.body) else { return nil }
        return DocumentBlobs.references(in: body).map { AttachmentFacts(contentType: $0.contentType, length: $0.length ?? 0) }
    }
}
