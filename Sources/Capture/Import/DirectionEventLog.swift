/// The events of one direction, in stream order, with the rules every direction follows:
/// times and packet positions never decrease, and after the first error only `tcpClosed` is kept.
struct DirectionEventLog: Sendable {
    let direction: CaptureDirection
    private(set) var events: [CapturedEvent] = []
    private(set) var isStopped = false
    private var lastTime = CaptureTimestamp.zero
    private var lastPacketIndex = 0

    init(_ direction: CaptureDirection) { self.direction = direction }

    mutating func append(_ kind: CapturedEvent.Kind, time: CaptureTimestamp, packetIndex: Int) {
        if isStopped {
            guard case .tcpClosed = kind else { return }
        }
        lastTime = max(lastTime, time)
        lastPacketIndex = max(lastPacketIndex, packetIndex)
        events.append(CapturedEvent(time: lastTime, direction: direction, kind: kind, packetIndex: lastPacketIndex))
        if case .error = kind { isStopped = true }
    }

    /// Interleaves two directions by time, then file position, keeping each one's own order.
    static func merge(_ first: DirectionEventLog, _ second: DirectionEventLog) -> [CapturedEvent] {
        var merged: [CapturedEvent] = []
        merged.reserveCapacity(first.events.count + second.events.count)
        var a = first.events[...], b = second.events[...]
        while let x = a.first, let y = b.first {
            if (x.time, x.packetIndex) <= (y.time, y.packetIndex) {
                merged.append(x)
                a = a.dropFirst()
            } else {
                merged.append(y)
                b = b.dropFirst()
            }
        }
        return merged + a + b
    }
}
