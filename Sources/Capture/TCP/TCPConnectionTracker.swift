/// Sorts TCP segments into connections and reassembles each direction.
///
/// - A connection is keyed by its 4-tuple, in either direction.
/// - A SYN without ACK on a 4-tuple whose connection has already seen FIN or RST, or whose
///   opening SYN had another ISN, starts a new connection; a SYN with the same ISN is a
///   retransmission.
/// - Segments are processed in file order. Everything stays in memory until ``finish()``.
struct TCPConnectionTracker: Sendable {
    private struct Key: Hashable, Sendable {
        var low: Endpoint
        var high: Endpoint
        init(_ a: Endpoint, _ b: Endpoint) {
            (low, high) = (a.ip, a.port) < (b.ip, b.port) ? (a, b) : (b, a)
        }
    }

    let limits: CaptureLimits
    private var connections: [ReassembledConnection] = []
    private var current: [Key: Int] = [:]

    init(limits: CaptureLimits) { self.limits = limits }

    mutating func receive(_ segment: TCPSegment) {
        let key = Key(segment.source, segment.destination)
        let opensConnection = segment.flags.contains(.syn) && !segment.flags.contains(.ack)
        if let index = current[key],
           !(opensConnection && connections[index].isReopened(bySYN: segment.sequenceNumber)) {
            connections[index].receive(segment)
            return
        }
        var connection = ReassembledConnection(first: segment, limits: limits)
        connection.receive(segment)
        current[key] = connections.count
        connections.append(connection)
    }

    /// Ends the capture: reports the bytes each direction is still missing, and returns every
    /// connection in the order of its first packet.
    mutating func finish() -> [ReassembledConnection] {
        for index in connections.indices { connections[index].finish() }
        defer { connections = []; current = [:] }
        return connections
    }
}
