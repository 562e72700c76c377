import BLIPCore
import NIOCore
import NIOHTTP1
import Replication

/// One client's session on the NIO side: it binds the client's and the upstream's channels and
/// the timers to a ``SessionCore``, feeds the core what happens (``handle(_:)``) and carries out
/// the actions it answers with. All decisions are the core's; this only does the I/O.
///
/// `@unchecked Sendable`: every method runs on the one event loop both channels share; the
/// server only hands the reference across threads to hop back onto that loop.
final class RelaySession: @unchecked Sendable {
    let eventLoop: EventLoop
    let core: SessionCore
    private var channels: [Channel?] = [nil, nil]
    private var hops: [HopHandler?] = [nil, nil]
    private var timers: [SessionTimer: Scheduled<Void>] = [:]
    private var finishedCallbacks: [() -> Void] = []
    private var finished = false
    /// Reused between inputs; a nested input (a write that changed writability) gets its own.
    private var spare: [SessionAction] = []

    init(info: SessionInfo, clientChannel: Channel, configuration: RelayConfiguration, observers: ObserverSet,
         checkpoints: CheckpointRegistry? = nil, budget: InProgressBudget? = nil) {
        eventLoop = clientChannel.eventLoop
        core = SessionCore(info: info, configuration: configuration, observers: observers,
                           allocator: clientChannel.allocator, checkpoints: checkpoints, budget: budget)
        channels[SessionSide.client.rawValue] = clientChannel
        core.readGate = SessionReadGate(session: self)
    }

    var info: SessionInfo { core.info }
    var isFinished: Bool { finished }
    var currentStatistics: SessionStatistics { core.currentStatistics }

    func setSubprotocol(_ subprotocol: String?) { core.setSubprotocol(subprotocol) }
    func setUpstreamResponse(_ response: HTTPResponseHead) { core.setUpstreamResponse(response) }
    func setUpstreamConnectTime(_ time: TimeAmount) { core.setUpstreamConnectTime(time) }
    func setUpstream(_ url: UpstreamURL) { core.setUpstream(url) }

    /// Puts `hop` (already in its channel's pipeline) into the session.
    func attach(_ hop: HopHandler, channel: Channel) {
        hop.session = self
        hops[hop.side.rawValue] = hop
        channels[hop.side.rawValue] = channel
        handle(.attached(hop.side, at: .now()))
    }

    /// The read allocator each attached hop's channel reads with (client, upstream), on the
    /// session's event loop: what ``RelayLimits/readBufferMinimum`` set.
    func readAllocators() -> [AdaptiveRecvByteBufferAllocator?] {
        channels.map { channel in
            (try? channel?.syncOptions?.getOption(.recvAllocator)).flatMap { $0 as? AdaptiveRecvByteBufferAllocator }
        }
    }

    /// The client's channel closed before its hop existed: the session learns it only this way.
    func clientChannelClosed() {
        guard hops[SessionSide.client.rawValue] == nil, !finished else { return }
        handle(.connectionClosed(.client, at: .now()))
    }

    /// Stops reading from both peers until as many ``releaseReading()`` (``SessionReadGate``).
    func holdReading() { handle(.holdReading) }
    func releaseReading() { handle(.releaseReading) }

    /// Closes the session for a relay shutdown: 1001 "going away" to both sides.
    func shutDown() {
        guard !finished else { return }
        handle(.shutDown(at: .now()))
    }

    /// Runs `callback` once both connections are closed (at once if they are).
    func whenFinished(_ callback: @escaping () -> Void) {
        if finished { callback() } else { finishedCallbacks.append(callback) }
    }

    // MARK: the loop

    /// Feeds `input` to the core and carries out its answer.
    func handle(_ input: SessionInput) {
        var actions: [SessionAction] = []
        swap(&actions, &spare)
        core.handle(input, into: &actions)
        for action in actions { execute(action) }
        actions.removeAll(keepingCapacity: true)
        spare = actions
    }

    private func execute(_ action: SessionAction) {
        switch action {
        case .write(let side, let bytes): hops[side.rawValue]?.write(bytes)
        case .flush(let side): flush(side)
        case .read(let side): hops[side.rawValue]?.issueRead()
        case .acknowledge(let side): hops[side.rawValue]?.acknowledgeNow()
        case .schedule(let timer, let delay):
            timers[timer]?.cancel()
            timers[timer] = eventLoop.scheduleTask(in: delay) { [self] in
                timers[timer] = nil
                handle(.timerFired(timer, at: .now()))
            }
        case .cancel(let timer): timers.removeValue(forKey: timer)?.cancel()
        case .close(let side):
            guard let channel = channels[side.rawValue] else { return }
            channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
        case .drop(let side): channels[side.rawValue]?.close(promise: nil)
        case .finished: finish()
        }
    }

    /// Flushes `side`; a flush that leaves its channel above the high-water mark is measured for
    /// the statistics (asked only then: the question costs a dynamic cast).
    private func flush(_ side: SessionSide) {
        guard let hop = hops[side.rawValue] else { return }
        hop.flush()
        if !hop.isWritable {
            var none: [SessionAction] = []
            core.handle(.buffered(side, bytes: hop.bufferedBytes), into: &none)
        }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        for hop in hops { hop?.session = nil }
        core.readGate?.detach()
        let callbacks = finishedCallbacks
        finishedCallbacks.removeAll()
        for callback in callbacks { callback() }
    }
}
