import BLIPCore
import struct Capture.CaptureTimestamp
import Mediation
import MediationRules
import NIOCore
import NIOHTTP1
import Policy
import Replication
import WebSocketWire

/// One relay session as a pure state machine: it takes ``SessionInput``s (bytes read on a side,
/// a read batch over, writability, timers, a connection gone) and answers with
/// ``SessionAction``s (write, flush, read, arm or cancel a timer, close or drop a side) for the
/// NIO side (``RelaySession``, ``HopHandler``) to carry out. It holds no `Channel` and no
/// `EventLoop`, so its tests script inputs and check the actions, without sockets
/// (`SessionCorePlaybookTests`). Events go to the ``ObserverSet`` it is given.
///
/// A frame's way through (one path for both modes):
///
/// ```
///  .bytes(side) ─▶ WebSocketFrameScanner ─▶ header + raw slice
///                    │ control frame: PING answered on its hop, PONG dropped, CLOSE ─▶ CloseStateMachine
///                    │ data frame ─▶ forwarder
///                    │     pass-through: runs of frames leave as the received bytes (one write per run)
///                    │     mediating: WebSocketMessageAssembler ─▶ SessionMediator ─▶ writes, timers, verdicts
///  .readComplete(side) ─▶ flush the partner ─▶ inspection: decode (SessionInspector) ─▶ analyzer ─▶ events
/// ```
///
/// Back-pressure: a side is read only while its partner takes writes, no ``SessionReadGate``
/// holds the session, and the mediator is under its delay budget for that direction; a held read
/// is issued (``SessionAction/read(_:)``) when that changes.
final class SessionCore {
    private(set) var info: SessionInfo
    let configuration: RelayConfiguration
    /// The relay's observers; once the session opens, each one's handler for this session.
    var observers: ObserverSet
    let inspector: SessionInspector
    /// Set when the configuration gave this session a policy: every frame is decoded before it is
    /// forwarded, and the mediator decides what leaves.
    let mediator: SessionMediator?
    /// The policy file's message rules for this session (``RelayConfiguration/policy``).
    let policyMediation: PolicyMediation?
    var statistics = SessionStatistics()
    var closing = CloseStateMachine()
    var scanners: [WebSocketFrameScanner]
    var assemblers: [WebSocketMessageAssembler]
    let allocator: ByteBufferAllocator
    /// Data frames forwarded and not yet decoded, both directions in the order they were read:
    /// at most ``RelayLimits/inspectionBatchFrames`` frames, and ``RelayLimits/inspectionBatchBytes``
    /// (``uninspectedBytes``) plus the frame that filled the batch: a full batch is inspected at
    /// once, inside the read that filled it if need be.
    var uninspected: [UninspectedFrame] = []
    /// What ``uninspected`` holds: its payloads, plus the whole buffer of each read they came in
    /// (a slice keeps its read's buffer alive).
    var uninspectedBytes = 0
    /// Per direction, data frames forwarded undecoded since the last ``RelayEvent/forwarded(sessionID:direction:frames:bytes:)``
    /// and their payload bytes: reported when the read that brought them is complete.
    var undecoded = [(frames: 0, bytes: 0), (frames: 0, bytes: 0)]
    /// Set while a ``SessionTimer/inspection`` is armed.
    var inspectionArmed = false
    /// The time of the latest input that carried one (``SessionInput``): frames read in it are
    /// stamped with it, and the session's open and close are timed by it.
    var now = ReceiptTime(uptime: .uptimeNanoseconds(0), wall: CaptureTimestamp(seconds: 0, nanoseconds: 0))
    /// Set once a side's bytes were not acceptable framing: more bytes from it close it.
    var framingFailed = [false, false]
    private(set) var attached = [false, false]
    private(set) var isOpen = false
    private var writable = [false, false]
    private var readHeld = [false, false]
    private var readHolds = 0
    private var idleWatch: IdleWatch?
    /// Writes to a side whose hop is not there yet (the upstream may speak before the client's
    /// 101 is out): at most one read's worth, since neither side is read before the session opens.
    private var early: [[ByteBuffer]] = [[], []]
    /// Given to the recorders (capture) at open, so they can hold reading when the disk lags.
    var readGate: SessionReadGate?
    /// The relay-wide bound on mediating sessions' partly received messages, and this session's
    /// share of it.
    let budget: InProgressBudget?
    var charged = 0
    private let checkpoints: CheckpointRegistry?

    init(info: SessionInfo, configuration: RelayConfiguration, observers: ObserverSet,
         allocator: ByteBufferAllocator = ByteBufferAllocator(), checkpoints: CheckpointRegistry? = nil,
         budget: InProgressBudget? = nil) {
        self.budget = budget
        self.info = info
        self.configuration = configuration
        self.observers = observers
        self.allocator = allocator
        self.checkpoints = checkpoints
        let limits = configuration.limits
        scanners = [WebSocketFrameScanner(maxFrameSize: limits.maxWebSocketFrameSize, requiresMask: true),
                    WebSocketFrameScanner(maxFrameSize: limits.maxWebSocketFrameSize)]
        assemblers = Array(repeating: WebSocketMessageAssembler(maxMessageSize: limits.maxWebSocketMessageSize,
                                                                keptBufferCapacity: limits.unmaskBufferKept,
                                                                allocator: allocator), count: 2)
        var policyMediation: PolicyMediation?
        if configuration.mediationPolicy == nil, let store = configuration.policy {
            policyMediation = PolicyMediation(store: store, session: SessionFacts(
                id: info.id, user: info.user, clientIP: info.clientAddress, database: info.database,
                tls: configuration.serverTLS != nil), clock: configuration.policyClock)
        }
        self.policyMediation = policyMediation
        if let policy = policyMediation ?? configuration.mediationPolicy?(info) {
            var mediationLimits = configuration.mediationLimits
            mediationLimits.decoder = limits.decoder
            mediator = SessionMediator(policy: policy, limits: mediationLimits)
        } else {
            mediator = nil
        }
        // A mediator decodes every frame itself; without one, the inspector decodes unless told not to.
        inspector = SessionInspector(sessionID: info.id, limits: limits, observers: observers,
                                     decodes: mediator == nil && configuration.decodes)
        statistics.sessionID = info.id
        statistics.decoding = readsMessages
    }

    var isFinished: Bool { closing.isFinished }

    /// Whether the session reads its messages: the inspector decodes them (until its budget is
    /// spent), or the mediator does. False for `relay --no-decode`.
    var readsMessages: Bool { inspector.isDecoding || mediator != nil }

    /// ``statistics`` with what the mediator counts itself filled in.
    var currentStatistics: SessionStatistics {
        var current = statistics
        if let mediator { current.maxDelayedBytes = BLIPDirection.allCases.map { mediator.peakDelayedBytes($0) } }
        current.unpairedReplies = inspector.forgottenReplies + (mediator?.forgottenReplies ?? 0)
        return current
    }

    func setSubprotocol(_ subprotocol: String?) {
        info.subprotocol = subprotocol
        policyMediation?.session.subprotocol = subprotocol
    }

    func setUpstreamResponse(_ response: HTTPResponseHead) { info.upstreamResponse = response }
    func setUpstreamConnectTime(_ time: TimeAmount) { info.upstreamConnectTime = time }
    func setUpstream(_ url: UpstreamURL) {
        info.upstream = url.description
        info.node = url.node
    }

    // MARK: inputs

    /// Takes one input; appends what to do to `actions` (in order). The session's analyzer,
    /// once its first message of the input takes it, stays held to the input's end (one lock per
    /// read batch, not per message: ``SessionInspector/releaseAnalyzer()``), and the observers
    /// hear that the input's events are all out (``SessionObserver/batchEnded()``).
    func handle(_ input: SessionInput, into actions: inout [SessionAction]) {
        take(input, into: &actions)
        inspector.releaseAnalyzer()
        observers.batchEnded()
    }

    private func take(_ input: SessionInput, into actions: inout [SessionAction]) {
        switch input {
        case .attached(let side, let time):
            now = time
            attach(side, into: &actions)
        case .bytes(let side, let bytes, let time):
            now = time
            received(bytes, on: side, into: &actions)
        case .readComplete(let side): readComplete(on: side, into: &actions)
        case .readRequested(let side): readRequested(on: side, into: &actions)
        case .writability(let side, let isWritable): writabilityChanged(side, isWritable, into: &actions)
        case .buffered(let side, let bytes):
            let direction = side.other.inbound.rawValue  // frames written to `side` travel its way out
            if bytes > statistics.maxBufferedBytes[direction] { statistics.maxBufferedBytes[direction] = bytes }
        case .timerFired(let timer, let time):
            now = time
            timerFired(timer, into: &actions)
        case .connectionClosed(let side, let time):
            now = time
            connectionClosed(side, into: &actions)
        case .channelFailed(let side): actions.append(.drop(side))
        case .holdReading: readHolds += 1
        case .releaseReading:
            readHolds = max(0, readHolds - 1)
            if readHolds == 0 { resumeReads(into: &actions) }
        case .shutDown(let time):
            now = time
            if attached[0] && attached[1] { fail(RelayError(.shuttingDown), into: &actions) }
            else { actions += SessionSide.allCases.filter { attached[$0.rawValue] }.map { .drop($0) } }
        }
    }

    // MARK: opening

    private func attach(_ side: SessionSide, into actions: inout [SessionAction]) {
        attached[side.rawValue] = true
        writable[side.rawValue] = true
        for bytes in early[side.rawValue] { actions.append(.write(side, bytes)) }
        if !early[side.rawValue].isEmpty { actions.append(.flush(side)) }
        early[side.rawValue].removeAll()
        guard attached[0] && attached[1], !isOpen else { return }
        isOpen = true
        if let timeout = configuration.idleTimeout {
            let watch = IdleWatch(timeout: timeout)
            idleWatch = watch
            actions.append(.schedule(.idleCheck, watch.checkInterval))
        }
        // A session that decodes nothing has nothing to analyse (and no replication to sum up at close).
        if observers.wants(.analysis), readsMessages {
            let analyzer = SessionAnalyzer(connection: Int(truncatingIfNeeded: info.id), registry: checkpoints)
            analyzer.observeHandshake(subprotocol: info.subprotocol, user: info.user, at: now.analyzerSeconds)
            info.analyzer = analyzer
            inspector.analyzer = analyzer
        }
        // Each observer's handler for this session, made once: no event looks the session up again.
        observers = observers.opened(info, readGate: readGate)
        inspector.observers = observers
        if observers.wants(.sessions) { observers.emit(.sessionOpened(info), kind: .sessions) }
        resumeReads(into: &actions)
    }

    // MARK: flow control

    /// Whether `side` may be read: the session is open, no ``SessionReadGate`` holds it, its
    /// partner takes writes, and the mediator (if any) is under its delay budget for the
    /// direction `side` receives.
    func mayRead(_ side: SessionSide) -> Bool {
        isOpen && readHolds == 0 && writable[side.other.rawValue]
            && !(mediator?.isOverDelayBudget(side.inbound) ?? false)
    }

    private func readRequested(on side: SessionSide, into actions: inout [SessionAction]) {
        if mayRead(side) {
            actions.append(.read(side))
        } else if !readHeld[side.rawValue] {
            readHeld[side.rawValue] = true
            flowChanged(side, paused: true)
        }
    }

    /// Issues the reads held back on the sides that may read now.
    func resumeReads(into actions: inout [SessionAction]) {
        for side in SessionSide.allCases where readHeld[side.rawValue] && mayRead(side) {
            readHeld[side.rawValue] = false
            flowChanged(side, paused: false)
            actions.append(.read(side))
        }
    }

    private func writabilityChanged(_ side: SessionSide, _ isWritable: Bool, into actions: inout [SessionAction]) {
        writable[side.rawValue] = isWritable
        if isWritable { resumeReads(into: &actions) }
    }

    private func flowChanged(_ side: SessionSide, paused: Bool) {
        if paused { statistics.flowPauses[side.inbound.rawValue] += 1 }
        if observers.wants(.sessions) {
            observers.emit(.flowControl(sessionID: info.id, direction: side.inbound, paused: paused), kind: .sessions)
        }
    }

    // MARK: writing

    /// Queues `bytes` for `side`, or keeps them until its hop exists. Counts as traffic.
    func write(_ bytes: ByteBuffer, to side: SessionSide, into actions: inout [SessionAction]) {
        sawTraffic()
        if attached[side.rawValue] { actions.append(.write(side, bytes)) } else { early[side.rawValue].append(bytes) }
    }

    /// Marks traffic for the idle check: any frame read or written, on either side.
    func sawTraffic() { idleWatch?.sawTraffic = true }

    // MARK: timers

    private func timerFired(_ timer: SessionTimer, into actions: inout [SessionAction]) {
        switch timer {
        case .idleCheck:
            guard !isFinished, var watch = idleWatch else { return }
            let idle = watch.check()
            idleWatch = watch
            if idle { fail(RelayError(.idleTimeout), into: &actions) } else { actions.append(.schedule(.idleCheck, watch.checkInterval)) }
        case .closeTimeout:
            apply(closing.timedOut(), into: &actions)
        case .mediation(let token):
            mediationTimerFired(token, into: &actions)
        case .inspection:
            inspectionArmed = false
            inspectPending(into: &actions)
        }
    }
}
