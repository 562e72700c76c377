/// A direction of a WebSocket connection whose TCP stream ended without its sender's CLOSE.
public struct TCPDrop: Sendable, Hashable {
    public var direction: CaptureDirection
    /// FIN or RST.
    public var kind: TCPCloseKind
    public var time: CaptureTimestamp

    public var timestamp: Double { time.secondsSince1970 }
}

extension CapturedConnection {
    /// The directions whose sender ended its TCP stream (FIN or RST) without having sent a
    /// WebSocket CLOSE: what the peer sees as an abnormal closure, 1006 (RFC 6455 §7.1.5). A FIN
    /// after the sender's CLOSE is the normal end and is not listed. Empty for connections that
    /// are not WebSocket, and for capture files (the relay records a drop as a close without code).
    public var dropsWithoutClose: [TCPDrop] {
        guard kind == .webSocket else { return [] }
        var closed: Set<CaptureDirection> = []
        var drops: [TCPDrop] = []
        for event in events {
            switch event.kind {
            case .close: closed.insert(event.direction)
            case .tcpClosed(let kind) where !closed.contains(event.direction):
                drops.append(TCPDrop(direction: event.direction, kind: kind, time: event.time))
            default: break
            }
        }
        return drops
    }
}
