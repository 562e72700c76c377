/// Sync Gateway's lines of one replication laid beside its BLIP messages. A line of a handled
/// request (`#N: Type:PROFILE`) goes with the client's request it handled: the k-th line of a
/// profile with the client's k-th request of that profile. SG's `#N` counts the requests it
/// handled, usually but not always in the BLIP numbers' order (two requests read together may be
/// handled in either order), so the profile and its order decide, not `#N`; SG's later lines with
/// the same `#N` (the request's result) go with the same request. Every other line
/// (changes sent, errors, the connection's end) goes with the session, in time order.
///
/// Incremental: the client's requests are given as they are sent (``request(number:profile:)``)
/// and SG's lines as they are read (``add(_:tag:)``), so a live session is joined as it runs. SG
/// handles a request only after the relay forwarded it, but the relay may record the request
/// after SG's line about it was read (it inspects after forwarding): such a line is held
/// (``Placement/held``) until its request is given, then placed (at most ``maxHeld`` lines wait
/// so; beyond, a line goes with the session).
/// Bounded: at most ``maxWaiting`` requests wait for their line (a log that names none of them,
/// such as one written below the level that logs requests, drops the oldest), and at most
/// ``maxWaiting`` of SG's request numbers are remembered for their later lines.
public struct SessionLogJoin: Sendable {
    /// Requests that wait for SG's line and SG numbers remembered, each at most this many.
    public let maxWaiting: Int
    /// SG's lines about a request the client has not been seen sending yet, held for it.
    public let maxHeld: Int
    private var held: [(line: SyncGatewayLogLine, tag: Int)] = []
    /// The client's requests not yet named by SG's log, by profile, oldest first.
    private var waiting: [Substring: ArraySlice<UInt64>] = [:]
    private var waitingCount = 0
    /// SG's `#N` → the BLIP number it was paired with, for SG's later lines about it.
    private var paired: [Int: UInt64] = [:]

    public init(maxWaiting: Int = 100_000, maxHeld: Int = 256) {
        self.maxWaiting = max(1, maxWaiting)
        self.maxHeld = max(0, maxHeld)
    }

    /// Where a line of SG's went.
    public enum Placement: Equatable, Sendable {
        /// About the client's request with this BLIP number.
        case request(UInt64)
        /// About the session (no request of its).
        case session
        /// About a request the client has not been seen sending yet: placed by the
        /// ``request(number:profile:)`` that gives it.
        case held
    }

    /// Joins a whole session: `requests` are the client's requests in the order sent.
    /// ``Joined/byRequest`` has the lines by the request's BLIP number, ``Joined/session`` the rest.
    public init(lines: [SyncGatewayLogLine], requests: [(number: UInt64, profile: String?)]) {
        self.init(maxWaiting: max(1, requests.count), maxHeld: 0)
        for request in requests { self.request(number: request.number, profile: request.profile) }
        for line in lines {
            if case .request(let number) = add(line) { joined.append(line, to: number) } else { joined.append(line, to: nil) }
        }
    }

    /// What ``init(lines:requests:)`` joined.
    public private(set) var joined = Joined()

    public struct Joined: Sendable {
        /// Lines by the client request's BLIP number.
        public private(set) var byRequest: [UInt64: [SyncGatewayLogLine]] = [:]
        /// Lines tied to no request.
        public private(set) var session: [SyncGatewayLogLine] = []

        mutating func append(_ line: SyncGatewayLogLine, to request: UInt64?) {
            if let request { byRequest[request, default: []].append(line) } else { session.append(line) }
        }
    }

    /// The client sent request `number` of `profile` (a request with no profile is never handled
    /// by name, so it is not kept). Returns the held lines this places: their tags and the request.
    @discardableResult
    public mutating func request(number: UInt64, profile: String?) -> [(tag: Int, number: UInt64)] {
        guard let profile else { return [] }
        if waitingCount >= maxWaiting, let oldest = waiting.min(by: { ($0.value.first ?? .max) < ($1.value.first ?? .max) })?.key {
            waiting[oldest] = waiting[oldest]?.dropFirst()
            waitingCount -= 1
        }
        waiting[Substring(profile), default: []].append(number)
        waitingCount += 1
        guard held.contains(where: { $0.line.profile == Substring(profile) }) else { return [] }
        var placed: [(tag: Int, number: UInt64)] = []
        var stillHeld: [(line: SyncGatewayLogLine, tag: Int)] = []
        for entry in held {
            if case .request(let number) = place(entry.line) { placed.append((entry.tag, number)) } else { stillHeld.append(entry) }
        }
        held = stillHeld
        return placed
    }

    /// Where `line` goes. `tag` names it when it is held (what ``request(number:profile:)``
    /// returns when it places it).
    public mutating func add(_ line: SyncGatewayLogLine, tag: Int = 0) -> Placement {
        let placement = place(line)
        guard placement == .held else { return placement }
        guard held.count < maxHeld else { return .session }
        held.append((line, tag))
        return .held
    }

    private mutating func place(_ line: SyncGatewayLogLine) -> Placement {
        guard let sgNumber = line.requestNumber else { return .session }
        if let number = paired[sgNumber] { return .request(number) }
        guard let profile = line.profile else { return .session }
        guard let number = waiting[profile]?.first else { return .held }
        waiting[profile] = waiting[profile]?.dropFirst()
        waitingCount -= 1
        if paired.count >= maxWaiting {
            // Forget the older half at once (SG numbers its requests in order), not one per line.
            let keep = paired.keys.sorted().dropFirst(paired.count / 2).first ?? sgNumber
            paired = paired.filter { $0.key >= keep }
        }
        paired[sgNumber] = number
        return .request(number)
    }
}
