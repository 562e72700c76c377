import BLIPCore
import NIOCore

/// A document revision, the unit the timeline and refusal counts follow; `collection` is the
/// index of its collection in a session with getCollections (the same ID in two collections is
/// two documents).
struct DocRev: Hashable {
    var docID: String
    var revID: String
    var collection: Int? = nil
}

/// A document in its collection (see ``DocRev``).
struct DocKey: Hashable {
    var docID: String
    var collection: Int?
}

/// The analyzer's whole state; its methods are the analysis, ``SessionAnalyzer`` the locked shell.
struct SessionState {
    struct PendingRequest {
        /// Boxed once here; the reply's typed view shares the box. Read its fields through the
        /// box (`box.message.content`): a local copy of the whole message costs as much as
        /// everything else done for a reply.
        var box: RequestBox
        var time: Double
        /// Where the request was counted in ``SessionState/profileStats``; its reply counts there.
        var statsSlot: Int
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

    /// The client's last setCheckpoint: when it was sent, and when it was saved (nil while it
    /// waits for its reply, or when it failed).
    struct CheckpointSave {
        var sentAt: Double
        var savedAt: Double?
    }

    let connection: Int
    let limits: AnalyzerLimits
    let registry: CheckpointRegistry?
    var context: MessageContext
    var startTime: Double?
    var lastTime: Double?
    var subprotocol: String?
    var user: String?
    var pending = [MessageNumberTable<PendingRequest>(), MessageNumberTable<PendingRequest>()]
    var profileStats = ProfileStatsTable(maxProfiles: SessionState.maxProfiles)
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
    /// Push progress (``SessionState/pushProgress``): when the server last answered the client's
    /// changes, proposeChanges or rev (or the client answered a wanted rev with norev), and the
    /// client's last setCheckpoint.
    var lastPushAnswerTime: Double?
    var lastCheckpointSave: CheckpointSave?
    /// Index with the sending direction's rawValue: 0 = pushed (client → server), 1 = pulled.
    var transfer = [TransferCounts(), TransferCounts()]
    var distinctDocuments: [Set<DocKey>] = [[], []]
    var messageCounts = [0, 0]
    var byteCounts = [0, 0]
    var errorCounts: [String: Int] = [:]
    /// getCheckpoints answered 404 for a client without a checkpoint (not errors).
    var newCheckpoints = 0
    var conflicts = 0
    var findings: [Finding] = []
    /// Standing findings by subject: their index in ``findings``.
    var standing: [StandingSubject: Int] = [:]
    /// Set by the message being observed when it raised, re-opened or ended a standing finding.
    var stuckReasonsChanged = false
    var findingsDropped = 0
    var violations = 0
    var closes: [CloseRecord] = []
    var attachmentOwners: [String: String] = [:]
    /// NoReply revs whose receiver has not shown their fate, by document (`SessionState+Storage`).
    var delivered: [DocKey: DeliveredRev] = [:]
    /// The last revision of each document its receiver was seen to store.
    var storedRevs: [DocKey: StoredRev] = [:]
    /// getAttachment requests awaiting their answers, by document.
    var fetching: [DocKey: Int] = [:]
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

    /// `withheld`: a request the relay kept from its receiver (``SessionAnalyzer/observe(withheld:from:at:)``).
    mutating func observe(message: BLIPMessage, from direction: BLIPDirection, at time: Double,
                          withheld: Bool = false) -> AnalyzedMessage {
        startTime = startTime ?? time
        lastTime = time
        messageCounts[direction.rawValue] += 1
        byteCounts[direction.rawValue] += message.wirePayloadBytes > 0 ? message.wirePayloadBytes : message.bodyLength
        let firstNewFinding = findings.count
        stuckReasonsChanged = false
        var expectedError = false
        // Each typed message is boxed once: a pending request and the returned AnalyzedMessage
        // share the box instead of copying the (large) typed view; the handlers borrow it.
        let box: RequestBox
        var latency: Double?
        if message.type == .request {
            box = RequestBox(ReplicationMessage.typing(message, answering: nil, context: context))
            recordRequest(box, noReply: message.isNoReply, from: direction, at: time)
            box.withMessage { typed in
                checkCollectionMode(typed, from: direction, at: time)
                if withheld { handleWithheld(typed, from: direction, at: time) } else { handleRequest(typed, noReply: message.isNoReply, from: direction, at: time) }
            }
        } else {
            let request = pending[direction.reversed.rawValue].removeValue(forKey: message.number)
            box = RequestBox(ReplicationMessage.typing(message, answering: request?.box, context: context))
            var isError = message.type == .error
            if isError, case .error(let error) = box.message.content {
                if let request, isNewCheckpointAnswer(error, to: request) {
                    // A new client's first getCheckpoint: 404 is the normal answer, not an error.
                    isError = false
                    expectedError = true
                    newCheckpoints += 1
                } else {
                    errorCounts[error.key, default: 0] += 1
                }
            }
            if let request {
                let elapsed = time - request.time
                latency = elapsed
                profileStats.update(request.statsSlot) { $0.recordAnswer(latency: elapsed, isError: isError) }
                box.withMessage { handleReply($0, to: request, from: direction, at: time, latency: elapsed) }
            }
        }
        if !box.message.violations.isEmpty { box.withMessage { reportViolations(of: $0, from: direction, at: time) } }
        let raised = findings.count > firstNewFinding ? Array(findings[firstNewFinding...]) : []
        return AnalyzedMessage(box: box, from: direction, time: time, latency: latency, findings: raised,
                               changesStuckReasons: stuckReasonsChanged, isExpectedError: expectedError)
    }

    /// True for a 404 answering getCheckpoint for a client whose checkpoint this session has not
    /// seen: a new client has none yet (litecore-behaviour.md "Checkpoints").
    private func isNewCheckpointAnswer(_ error: ErrorReply, to request: PendingRequest) -> Bool {
        guard error.code == 404, error.domain == "HTTP",
              case .getCheckpoint(let sent) = request.box.message.content, let client = sent.client else { return false }
        return checkpoints[client]?.rev == nil
    }

    private mutating func reportViolations(of typed: borrowing ReplicationMessage, from direction: BLIPDirection,
                                           at time: Double) {
        for violation in typed.violations {
            let kind: Finding.Kind = violation.isCollectionModeViolation ? .mixedCollectionModes : .protocolViolation
            report(kind, side: direction, message: typed, at: time,
                   text: "\(typed.profile ?? "message") #\(typed.number): \(violation)")
        }
    }

    private mutating func recordRequest(_ box: RequestBox, noReply: Bool, from direction: BLIPDirection,
                                        at time: Double) {
        let slot = profileStats.slot(profile: box.message.profile, known: box.message.knownProfile)
        profileStats.update(slot) { stats in
            stats.requests += 1
            if noReply { stats.noReply += 1 }
        }
        guard !noReply else { return }
        guard pending[direction.rawValue].count < limits.maxPendingRequests else {
            reportLimit("pending", "more than \(limits.maxPendingRequests) requests await replies; later ones are not paired", at: time)
            return
        }
        pending[direction.rawValue][box.message.number] = PendingRequest(box: box, time: time, statsSlot: slot)
    }

    /// Legacy vs collection-aware (§5): the first replication request decides; mixing is reported.
    private mutating func checkCollectionMode(_ typed: borrowing ReplicationMessage, from direction: BLIPDirection, at time: Double) {
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

    /// A finding about `message` (borrowed: making it optional would copy it).
    mutating func report(_ kind: Finding.Kind, side: BLIPDirection?, message: borrowing ReplicationMessage,
                         docID: String? = nil, at time: Double, text: String) {
        report(kind, side: side, profile: message.profile, number: message.number, docID: docID, at: time, text: text)
    }

    mutating func report(_ kind: Finding.Kind, side: BLIPDirection?, profile: String? = nil, number: MessageNumber? = nil,
                         docID: String? = nil, at time: Double, text: String) {
        if kind == .protocolViolation || kind == .mixedCollectionModes { violations += 1 }
        guard findings.count < limits.maxFindings else {
            findingsDropped += 1
            return
        }
        findings.append(Finding(kind: kind, connection: connection, time: time, side: side, profile: profile,
                                number: number, docID: docID, message: text))
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
        // A close that cut revisions short is one closedMidTransfer finding, which says the pull
        // had not caught up; notCaughtUp is for a close between batches.
        if closes.count == 1, continuous == false, let sender = subChangesSender, caughtUpTime == nil,
           closedMidTransferFinding() == nil {
            report(.notCaughtUp, side: sender.reversed, at: time,
                   text: "one-shot pull closed before the empty changes message that signals caught-up")
        }
    }
}
