import Logging
import NIOConcurrencyHelpers
import NIOCore
import Policy
import RedisClient

/// The relay's fleet limits over Redis: the thin shell that runs ``FleetLimiterCore``. A spend
/// (per message, under the policy's lock) only takes this object's lock and reads the core;
/// the draws the core asks for, the heartbeat and the session leases run as tasks whose Redis
/// calls are each bounded by the client's command timeout (``FleetLimitsConfiguration/redisTimeout``).
/// A failed or late call puts the core in its degraded mode, logged once with the metric set
/// through `report`; the next answer from Redis puts it back.
public final class FleetLimiter: FleetRateLimiting, FleetSessionLimiting, Sendable {
    public let configuration: FleetLimitsConfiguration
    let redis: any RedisCommandSending
    let core: NIOLockedValueBox<FleetLimiterCore>
    let clock: @Sendable () -> UInt64
    let logger: Logger
    private let report: @Sendable (FleetModeChange) -> Void
    private let eventLoop: any EventLoop
    private let heartbeats = NIOLockedValueBox<RepeatedTask?>(nil)
    let watchers = FleetWatchers()

    /// - Parameters:
    ///   - redis: the fleet's Redis (a ``RedisClient`` whose command timeout is the configuration's).
    ///   - eventLoop: where the heartbeat is scheduled.
    ///   - clock: the policy's clock (nanoseconds, monotonic).
    ///   - report: told each change of mode (the relay's metrics).
    public init(configuration: FleetLimitsConfiguration, redis: any RedisCommandSending, eventLoop: any EventLoop,
                clock: @escaping @Sendable () -> UInt64 = PolicyClock.now,
                logger: Logger = Logger(label: "blipscope.fleet"),
                report: @escaping @Sendable (FleetModeChange) -> Void = { _ in }) {
        self.configuration = configuration
        self.redis = redis
        self.eventLoop = eventLoop
        self.clock = clock
        self.logger = logger
        self.report = report
        core = NIOLockedValueBox(FleetLimiterCore(configuration: configuration))
    }

    /// The core's mode and live relays now.
    public var snapshot: FleetSnapshot { core.withLockedValue { FleetSnapshot($0) } }

    /// Loads the scripts (a Redis that is not there yet is the heartbeat's to notice) and starts
    /// heartbeating at once, then every ``FleetLimitsConfiguration/heartbeatInterval``.
    public func start() {
        let interval = TimeAmount.nanoseconds(Int64(configuration.heartbeatInterval))
        let task = eventLoop.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: interval) { _ in
            self.eventLoop.makeFutureWithTask { await self.tick() }
        }
        heartbeats.withLockedValue { $0 = task }
        Task {
            for script in FleetScripts.all { _ = try? await redis.scriptLoad(script.source) }
        }
    }

    /// Stops heartbeating (the relay's entry in Redis expires within its TTL).
    public func stop() {
        heartbeats.withLockedValue { task in
            task?.cancel()
            task = nil
        }
    }

    // MARK: rate limits

    public func spend(_ spend: FleetSpend, now: UInt64) -> FleetSpendResult {
        let (result, draw) = core.withLockedValue { $0.spend(spend, now: now) }
        if let draw { Task { await self.run(draw) } }
        return result
    }

    /// Sends one draw (or return) and hands the answer to the core.
    func run(_ draw: FleetDraw) async {
        let key = configuration.keyPrefix + "rate:" + draw.key.rule + ":" + draw.key.bucket
        let sent = clock()
        do {
            let reply = try await redis.evaluate(FleetScripts.draw, keys: [key], arguments: [
                String(draw.rate), String(draw.burst), String(draw.want), String(draw.giveBack),
            ])
            guard let parts = reply.array, parts.count == 2, let granted = parts[0].integer, let wait = parts[1].integer else {
                throw FleetLimitsError.unexpectedReply(script: "draw", reply)
            }
            let now = clock()
            core.withLockedValue {
                $0.drawn(draw, granted: Int(granted), retryAfterMilliseconds: Int(wait), now: now, roundTrip: now > sent ? now - sent : 0)
            }
        } catch {
            changed(core.withLockedValue { $0.drawFailed(draw, reason: "\(error)", sentAt: sent) })
        }
    }

    // MARK: heartbeat

    /// One heartbeat: this relay's entry in the live list, its session leases renewed, idle
    /// tokens given back.
    func tick() async {
        let sent = clock()
        do {
            let reply = try await redis.evaluate(FleetScripts.heartbeat, keys: [configuration.keyPrefix + "relays"], arguments: [
                configuration.relayID, String(configuration.relayTTL / 1_000_000),
            ])
            guard let live = reply.integer else { throw FleetLimitsError.unexpectedReply(script: "heartbeat", reply) }
            changed(core.withLockedValue { $0.heartbeat(liveRelays: Int(live), sentAt: sent) })
            try await renewLeases()
        } catch {
            changed(core.withLockedValue { $0.redisFailed(reason: "\(error)", sentAt: sent) })
            return
        }
        let now = clock()
        for giveBack in core.withLockedValue({ $0.sweep(now: now) }) { await run(giveBack) }
    }

    /// Mode changes are logged once each way and reported; every state change wakes watchers.
    func changed(_ change: FleetModeChange?) {
        if let change {
            switch change {
            case let .degraded(reason, live):
                logger.warning("fleet limits degraded: Redis did not answer; local limits of limit ÷ \(live) live relays until it does",
                               metadata: ["reason": "\(reason)", "live_relays": "\(live)"])
            case .shared:
                logger.warning("fleet limits shared again: Redis answers")
            }
            report(change)
        }
        watchers.notify(snapshot)
    }

    /// Returns once `predicate` holds for the core's state (checked at each change), false if
    /// it does not within `timeout`.
    public func wait(within timeout: Duration, until predicate: @escaping @Sendable (FleetSnapshot) -> Bool) async -> Bool {
        await watchers.wait(within: timeout, current: { self.snapshot }, until: predicate)
    }
}
