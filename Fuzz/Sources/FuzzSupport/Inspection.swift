import BLIPCore
import Capture

/// Runs what `blipscope inspect` does with imported connections: every BLIP frame decoded, every
/// record rendered as text (not as JSON: that is Foundation's serializer, most of the time spent).
public func inspectAll(_ connections: [CapturedConnection], limits: BLIPLimits = .default) {
    let inspector = CaptureInspector(limits: limits, includeAcks: true)
    for connection in connections {
        _ = connection.events(.clientToServer)
        inspector.inspect(connection) { record in
            _ = record.textLine()
        }
    }
}
