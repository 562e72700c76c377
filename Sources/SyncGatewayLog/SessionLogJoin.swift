/// Sync Gateway's lines of one replication laid beside its BLIP messages. A line of a handled
/// request (`#N: Type:PROFILE`) goes with the client's request it handled: the k-th line of a
/// profile with the client's k-th request of that profile. SG's `#N` counts the requests it
/// handled, usually but not always in the BLIP numbers' order (two requests read together may be
/// handled in either order), so the profile and its order decide, not `#N`; SG's later lines with
/// the same `#N` (the request's result) go with the same request. Every other line
/// (changes sent, errors, the connection's end) goes with the session, in time order.
public struct SessionLogJoin: Sendable {
    /// Lines by the client request's BLIP number.
    public private(set) var byRequest: [UInt64: [SyncGatewayLogLine]] = [:]
    /// Lines tied to no request.
    public private(set) var session: [SyncGatewayLogLine] = []

    /// `requests`: the client's requests, in the order sent: (BLIP number, profile).
    public init(lines: [SyncGatewayLogLine], requests: [(number: UInt64, profile: String?)]) {
        var queues: [Substring: [UInt64]] = [:]
        for request in requests { if let profile = request.profile { queues[Substring(profile), default: []].append(request.number) } }
        var taken: [Substring: Int] = [:]
        /// SG's `#N` → the BLIP number it was paired with: SG's later lines about the same request
        /// (its result, `--> 403 …`) go with it too.
        var paired: [Int: UInt64] = [:]
        for line in lines {
            if let sgNumber = line.requestNumber, let number = paired[sgNumber] {
                byRequest[number, default: []].append(line)
                continue
            }
            guard let sgNumber = line.requestNumber, let profile = line.profile, let queue = queues[profile] else {
                session.append(line)
                continue
            }
            let index = taken[profile, default: 0]
            guard index < queue.count else {
                session.append(line)
                continue
            }
            taken[profile] = index + 1
            paired[sgNumber] = queue[index]
            byRequest[queue[index], default: []].append(line)
        }
    }
}
