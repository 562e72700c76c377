import Policy
import RedisClient

extension FleetLimiter {
    func sessionKey(_ claim: FleetSessionClaim) -> String {
        configuration.keyPrefix + "sessions:" + FleetLimiterCore.count(claim)
    }

    func member(_ session: UInt64) -> String { configuration.relayID + ":" + String(session) }

    public func open(_ claims: [FleetSessionClaim], session: UInt64) async -> ConnectionRefusal? {
        guard !claims.isEmpty else { return nil }
        if core.withLockedValue({ $0.degraded }) { return openLocally(claims, session: session) }
        var taken: [FleetSessionClaim] = []
        let sent = clock()
        do {
            for claim in claims {
                let reply = try await redis.evaluate(FleetScripts.openSession, keys: [sessionKey(claim)], arguments: [
                    member(session), String(claim.limit), String(configuration.sessionLease / 1_000_000),
                ])
                guard let parts = reply.array, parts.count == 2, let admitted = parts[0].integer else {
                    throw FleetLimitsError.unexpectedReply(script: "openSession", reply)
                }
                if admitted == 1 {
                    taken.append(claim)
                    continue
                }
                if claim.refusal.dryRun { continue }  // logged by the relay, admitted
                release(taken, session: session)
                return claim.refusal
            }
        } catch {
            release(taken, session: session)
            changed(core.withLockedValue { $0.redisFailed(reason: "\(error)", sentAt: sent) })
            return openLocally(claims, session: session)
        }
        core.withLockedValue { $0.opened(claims, session: session) }
        return nil
    }

    /// While Redis is away: this relay's share of each count.
    private func openLocally(_ claims: [FleetSessionClaim], session: UInt64) -> ConnectionRefusal? {
        core.withLockedValue { core in
            if let refusal = core.localRefusal(claims), !refusal.dryRun { return refusal }
            core.opened(claims, session: session)
            return nil
        }
    }

    public func close(_ claims: [FleetSessionClaim], session: UInt64) {
        guard !claims.isEmpty else { return }
        core.withLockedValue { $0.closed(claims, session: session) }
        release(claims, session: session)
    }

    /// Removes the leases (best effort: a lease Redis does not hear of expires).
    private func release(_ claims: [FleetSessionClaim], session: UInt64) {
        guard !claims.isEmpty else { return }
        let keys = claims.map(sessionKey)
        let member = member(session)
        Task {
            for key in keys { _ = try? await redis.send(RESPCommand("ZREM", key, member)) }
        }
    }

    /// At each heartbeat: every open session's leases renewed (and re-added after a Redis restart).
    func renewLeases() async throws(RedisError) {
        let counts = core.withLockedValue { $0.openSessions }
        for (count, sessions) in counts where !sessions.isEmpty {
            let key = configuration.keyPrefix + "sessions:" + count
            let arguments = [String(configuration.sessionLease / 1_000_000)] + sessions.map(member)
            _ = try await redis.evaluate(FleetScripts.renewSessions, keys: [key], arguments: arguments)
        }
    }
}
