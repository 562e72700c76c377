import BLIPCore
import NIOCore

/// A document revision, the unit the timeline and refusal counts follow.
struct DocRev: Hashable {
    var docID: String
    var revID: String
}

/// The analyzer's whole state; its methods are the analysis, ``SessionAnalyzer`` the locked shell.
struct SessionState {
    struct PendingRequest {
        var message: ReplicationMessage
        var time: Double
    }

    struct WantedRev {
        var time: Double
        /// The side expected to send the rev.
        var sender: BLIPDirection
        var number: MessageNumber
    }

    struct PausedKey: Hashable {
        var direction: BLIPDirection
        var type: MessageType
        var number: MessageNumber
    }

    enum CollectionMode: String { case undetermined, legacy, collectionAware }

    let connection: Int
    let limits: AnalyzerLimits
    let registry: CheckpointRegistry?
    var context: MessageContext
    var startTime: Double?
    var lastTime: Double?
    var subprotocol: String?
    var user: String?
    var pending: [[MessageNumber: PendingRequest]] = [[:], [:]]
    var profileStats: [String: ProfileStats] = [:]
    var collectionMode = CollectionMode.undetermined
    var timelines: DocumentTimelines
    var wanted: [DocRev: WantedRev] = [:]
    var refusals: [DocRev: Int] = [:]
    var checkpoints: [String: CheckpointState] = [:]
    var paused: [PausedKey: Double] = [:]
    var subChangesTime: Double?
    var subChangesSender: BLIPDirection?
    var continuous: Bool?
    var caughtUpTime: Double?
    var lastChangesTime: Double?
    /// Index with the sending direction's rawValue: 0 = pushed (client → server), 1 = pulled.
    var transfer = [TransferCounts(), TransferCounts()]
    var distinctDocuments: [Set<String>] = [[], []]
    var messageCounts = [0, 0]
    var byteCounts = [0, 0]
    var errorCounts: [String: Int] = [:]
    var conflicts = 0
    var findings: [Finding] = []
    var findingsDropped = 0
    var violations = 0
    var closes: [CloseRecord] = []
    var attachmentOwners: [String: String] = [:]
    var limitsReported: Set<String> = []

    static let maxAttachmentOwners = 10_000
    static let maxProfiles = 64

    init(connection: Int, limits: AnalyzerLimits, registry: CheckpointRegistry?) {
        self.connection = connection
        self.limits = limits
        self.registry = registry
        self.context = MessageContext(maxJSONBodyBytes: limits.maxJSONBodyBytes)
        self.timelines = DocumentTimelines(limits: limits)
    }

    mutating func observeHandshake(subprotocol: String?, user: String?, at time: Double) {
        self.subprotocol = subprotocol
        self.user = user
        startTime = startTime ?? time
    }

    mutating func observe(message: BLIPMessage, from direction: BLIPDirection, at time: Double) -> AnalyzedMessage {
        startTime = startTime ?? time
        lastTime = time
        messageCounts[direction.rawValue] += 1
        byteCounts[direction.rawValue] += message.wirePayloadBytes > 0 ? message.wirePayloadBytes : message.body.readableBytes
        let firstNewFinding = findings.count
        let typed: ReplicationMessage
        var latency: Double?
        if message.type == .request {
            typed = ReplicationMessage(message, context: context)
            recordRequest(typed, noReply: message.isNoReply, from: direction, at: time)
            checkCollectionMode(typed, from: direction, at: time)
            handleRequest(typed, from: direction, at: time)
        } else {
            let request = pending[direction.reversed.rawValue].removeValue(forKey: message.number)
            typed = ReplicationMessage(message, answering: request?.message, context: context)
            if let request {
                let elapsed = time - request.time
                latency = elapsed
                updateStats(request.message.profile) { $0.recordAnswer(latency: elapsed, isError: message.type == .error) }
                if case .error(let error) = typed.content { errorCounts[error.key, default: 0] += 1 }
                handleReply(typed, to: request, from: direction, at: time, latency: elapsed)
            } else if case .error(let error) = typed.content {
                errorCounts[error.key, default: 0] += 1
            }
        }
        for violation in typed.violations {
            let kind: Finding.Kind = violation.isCollectionModeViolation ? .mixedCollectionModes : .protocolViolation
            report(kind, side: direction, message: typed, at: time, text: "\(typed.profile ?? "message") #\(typed.number): \(violation)")
        }
        let raised = findings.count > firstNewFinding ? Array(findings[firstNewFinding...]) : []
        return AnalyzedMessage(message: typed, from: direction, time: time, latency: latency, findings: raised)
    }

    private mutating func recordRequest(_ typed: ReplicationMessage, noReply: Bool, from direction: BLIPDirection,
                                        at time: Double) {
        updateStats(typed.profile) { stats in
            stats.requests += 1
            if noReply { stats.noReply += 1 }
        }
        guard !noReply else { return }
        guard pending[direction.rawValue].count < limits.maxPendingRequests else {
            reportLimit("pending", "more than \(limits.maxPendingRequests) requests await replies; later ones are not paired", at: time)
            return
        }
        pending[direction.rawValue][typed.number] = PendingRequest(message: typed, time: time)
    }

    private mutating func updateStats(_ profile: String?, _ update: (inout ProfileStats) -> Void) {
        var key = profile ?? "(none)"
        if profileStats[key] == nil, profileStats.count >= Self.maxProfiles { key = "(other)" }
        update(&profileStats[key, default: ProfileStats(profile: key)])
    }

    /// Legacy vs collection-aware (§5): the first replication request decides; mixing is reported.
    private mutating func checkCollectionMode(_ typed: ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        guard let profile = typed.knownProfile, profile != .ping else { return }
        if collectionMode == .undetermined {
            collectionMode = profile == .getCollections ? .collectionAware : .legacy
        } else if profile == .getCollections, collectionMode == .legacy {
            report(.mixedCollectionModes, side: direction, message: typed, at: time,
                   text: "getCollections #\(typed.number) on a connection already in legacy mode")
        }
        guard profile.takesCollection else { return }
        if collectionMode == .collectionAware, typed.collection == nil {
            report(.mixedCollectionModes, side: direction, message: typed, at: time,
                   text: "\(profile.rawValue) #\(typed.number): \(ReplicationError.collectionMissing(profile.rawValue))")
        } else if collectionMode == .legacy, typed.collection != nil {
            report(.mixedCollectionModes, side: direction, message: typed, at: time,
                   text: "\(profile.rawValue) #\(typed.number): \(ReplicationError.collectionInLegacyMode(profile.rawValue))")
        }
    }

    mutating func report(_ kind: Finding.Kind, side: BLIPDirection?, message: ReplicationMessage? = nil,
                         docID: String? = nil, at time: Double, text: String) {
        if kind == .protocolViolation || kind == .mixedCollectionModes { violations += 1 }
        guard findings.count < limits.maxFindings else {
            findingsDropped += 1
            return
        }
        findings.append(Finding(kind: kind, connection: connection, time: time, side: side, profile: message?.profile,
                                number: message?.number, docID: docID, message: text))
    }

    mutating func reportLimit(_ key: String, _ text: String, at time: Double) {
        guard limitsReported.insert(key).inserted else { return }
        report(.limitReached, side: nil, at: time, text: text)
    }

    mutating func observeAck(_ ack: AckInfo, from direction: BLIPDirection, at time: Double) {
        let type: MessageType = ack.type == .ackRequest ? .request : .response
        paused[PausedKey(direction: direction.reversed, type: type, number: ack.number)] = nil
        if type == .response {
            paused[PausedKey(direction: direction.reversed, type: .error, number: ack.number)] = nil
        }
    }

    mutating func observePaused(_ direction: BLIPDirection, type: MessageType, number: MessageNumber, at time: Double) {
        let key = PausedKey(direction: direction, type: type, number: number)
        if paused[key] == nil { paused[key] = time }
    }

    mutating func observeResumed(_ direction: BLIPDirection, type: MessageType, number: MessageNumber) {
        paused[PausedKey(direction: direction, type: type, number: number)] = nil
    }

    mutating func observeClose(from direction: BLIPDirection?, code: Int?, reason: String, at time: Double) {
        lastTime = time
        closes.append(CloseRecord(from: direction?.description, code: code, reason: reason, time: time))
        if closes.count == 1, continuous == false, let sender = subChangesSender, caughtUpTime == nil {
            report(.notCaughtUp, side: sender.reversed, at: time,
                   text: "one-shot pull closed before the empty changes message that signals caught-up")
        }
    }
}
