import BLIPCore
import NIOCore

/// Decodes every BLIP frame of captured connections into ``InspectRecord``s: one per message,
/// per ACK (when asked), per close and per decoding problem.
///
/// Each connection gets a ``ConnectionDecoder``; events are fed in capture order. A fatal error
/// stops only its own direction (reported once, with the frame index); the other direction and
/// the other connections go on.
public struct CaptureInspector: Sendable {
    public var limits: BLIPLimits
    public var includeAcks: Bool

    public init(limits: BLIPLimits = .default, includeAcks: Bool = false) {
        self.limits = limits
        self.includeAcks = includeAcks
    }

    /// The records of one connection, in the order they completed.
    public func inspect(_ connection: CapturedConnection, emit: (InspectRecord) -> Void) {
        let decoder = ConnectionDecoder(limits: limits)
        var frameIndex: [BLIPDirection: Int] = [:]
        var requests: [BLIPDirection: [MessageNumber: (profile: String?, time: Double)]] = [:]
        for event in connection.events {
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            func record(_ kind: InspectRecord.Kind) -> InspectRecord {
                InspectRecord(connection: connection.index, direction: direction, timestamp: event.timestamp, kind: kind)
            }
            switch event.kind {
            case .message(_, let payload):
                frameIndex[direction, default: 0] += 1
                let index = frameIndex[direction]!
                if decoder.failure(of: direction) != nil { continue }
                do {
                    let decoded = try decoder.receive(payload, from: direction)
                    switch decoded.outcome {
                    case .ack(let ack):
                        if includeAcks { emit(record(.ack(ack))) }
                    case .ignored(let error):
                        emit(record(.error("frame \(index): \(error)", frame: index, fatal: false)))
                    case .data:
                        if decoded.startsMessage, decoded.flags.type == .request {
                            requests[direction, default: [:]][decoded.number] = (nil, event.timestamp)
                        }
                        if let head = decoded.head, head.type == .request {
                            requests[direction, default: [:]][head.number]?.profile = head.properties.profile
                        }
                        guard let message = decoded.message else { continue }
                        if message.type == .request {
                            requests[direction, default: [:]][message.number]?.profile = message.profile
                        }
                        var result = record(.message(message))
                        if message.type.isReply,
                           let request = requests[direction.reversed]?.removeValue(forKey: message.number) {
                            result.requestProfile = request.profile
                            result.roundTrip = event.timestamp - request.time
                        }
                        emit(result)
                    }
                } catch {
                    emit(record(.error("frame \(index): \(error)", frame: index, fatal: true)))
                }
            case .close(let code, let reason):
                emit(record(.close(code: code, reason: reason)))
            case .error(let error):
                emit(record(.error("capture: \(error)", frame: frameIndex[direction, default: 0] + 1, fatal: true)))
            case .ping, .pong, .tcpClosed:
                continue
            }
        }
    }
}
