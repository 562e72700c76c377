import BLIPCore
import NIOCore

/// Decodes every BLIP frame of captured connections into ``InspectRecord``s: one per message,
/// per ACK and per frame with MoreComing (when asked), per close and per decoding problem.
///
/// Each connection gets a ``ConnectionInspection`` (a ``ConnectionDecoder`` underneath); events
/// are fed in capture order. A fatal error stops only its own direction (reported once, with the
/// frame index); the other direction and the other connections go on.
public struct CaptureInspector: Sendable {
    public var limits: BLIPLimits
    public var includeAcks: Bool
    public var includeFrames: Bool

    public init(limits: BLIPLimits = .default, includeAcks: Bool = false, includeFrames: Bool = false) {
        self.limits = limits
        self.includeAcks = includeAcks
        self.includeFrames = includeFrames
    }

    /// The records of one connection, in the order they completed.
    public func inspect(_ connection: CapturedConnection, emit: (InspectRecord) -> Void) {
        var inspection = ConnectionInspection(connection: connection.index, limits: limits, includeAcks: includeAcks,
                                              includeFrames: includeFrames)
        for event in connection.events {
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            inspection.receive(event.kind, direction: direction, timestamp: event.timestamp, emit: emit)
        }
    }
}
