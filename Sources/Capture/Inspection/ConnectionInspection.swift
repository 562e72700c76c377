import BLIPCore
import NIOCore

/// The inspection of one connection, fed one event at a time: the incremental core of
/// ``CaptureInspector``, also driven by the live ``Sniffer``.
///
/// Keeps a ``ConnectionDecoder`` and the requests waiting for replies (to pair them), nothing
/// else: memory is that of the decoder (messages in progress) plus one entry per open request.
public struct ConnectionInspection {
    public let connection: Int
    public let includeAcks: Bool
    public let includeFrames: Bool
    private let decoder: ConnectionDecoder
    private var frameIndex: [BLIPDirection: Int] = [:]
    private var requests: [BLIPDirection: [MessageNumber: (profile: String?, time: Double)]] = [:]

    public init(connection: Int, limits: BLIPLimits = .default, includeAcks: Bool = false, includeFrames: Bool = false) {
        self.connection = connection
        self.includeAcks = includeAcks
        self.includeFrames = includeFrames
        self.decoder = ConnectionDecoder(limits: limits)
    }

    /// Frames seen so far in `direction`.
    public func frames(in direction: BLIPDirection) -> Int { frameIndex[direction, default: 0] }

    /// Takes one event; emits what it completed.
    public mutating func receive(
        _ kind: CapturedEvent.Kind, direction: BLIPDirection, timestamp: Double, emit: (InspectRecord) -> Void
    ) {
        func record(_ kind: InspectRecord.Kind) -> InspectRecord {
            InspectRecord(connection: connection, direction: direction, timestamp: timestamp, kind: kind)
        }
        switch kind {
        case .message(_, let payload):
            let frameBytes = payload.readableBytes
            frameIndex[direction, default: 0] += 1
            let index = frameIndex[direction]!
            if decoder.failure(of: direction) != nil { return }
            do {
                let decoded = try decoder.receive(payload, from: direction)
                switch decoded.outcome {
                case .ack(let ack):
                    if includeAcks { emit(record(.ack(ack))) }
                case .ignored(let error):
                    emit(record(.error("frame \(index): \(error)", frame: index, fatal: false)))
                case .data:
                    if includeFrames, decoded.flags.hasMoreComing {
                        emit(record(.frame(number: decoded.number, flags: decoded.flags, wireBytes: frameBytes)))
                    }
                    if let result = completed(decoded, direction: direction, timestamp: timestamp) {
                        emit(result)
                    }
                }
            } catch {
                emit(record(.error("frame \(index): \(error)", frame: index, fatal: true)))
            }
        case .close(let code, let reason):
            emit(record(.close(code: code, reason: reason)))
        case .error(let error):
            emit(record(.error("capture: \(error)", frame: frameIndex[direction, default: 0] + 1, fatal: true)))
        case .ping, .pong, .tcpClosed:
            return
        }
    }

    /// Tracks requests for reply pairing; the record of a message this frame completed.
    private mutating func completed(_ decoded: DecodedFrame, direction: BLIPDirection, timestamp: Double) -> InspectRecord? {
        if decoded.startsMessage, decoded.flags.type == .request {
            requests[direction, default: [:]][decoded.number] = (nil, timestamp)
        }
        if let head = decoded.head, head.type == .request {
            requests[direction, default: [:]][head.number]?.profile = head.properties.profile
        }
        guard let message = decoded.message else { return nil }
        if message.type == .request {
            requests[direction, default: [:]][message.number]?.profile = message.profile
            if message.isNoReply { requests[direction]?[message.number] = nil }
        }
        var result = InspectRecord(connection: connection, direction: direction, timestamp: timestamp,
                                   kind: .message(message))
        if message.type.isReply,
           let request = requests[direction.reversed]?.removeValue(forKey: message.number) {
            result.requestProfile = request.profile
            result.roundTrip = timestamp - request.time
        }
        return result
    }
}
