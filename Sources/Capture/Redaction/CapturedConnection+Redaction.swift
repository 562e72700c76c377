import BLIPCore

extension CapturedConnection {
    /// The connection as it may leave the process (`export --pcap`): the upgrade's secret headers
    /// and query values redacted (``HeaderRedaction``), secret BLIP property values masked inside
    /// the frames and each direction's stream re-encoded to stay decodable (``CaptureRedactor``).
    /// Frames that cannot be checked for secrets are left out; `notes` says so.
    public func redactingSecrets(limits: BLIPLimits = .default) -> (connection: CapturedConnection, notes: [String]) {
        var copy = self
        if var request = copy.request {
            request.target = HeaderRedaction.redactTarget(request.target)
            request.headers = HeaderRedaction.redact(request.headers)
            copy.request = request
        }
        if let headers = response?.headers { copy.response?.headers = HeaderRedaction.redact(headers) }
        // Only a connection whose upgrade was seen has its streams from their start.
        let redactor = CaptureRedactor(limits: limits, joinedMidSession: request == nil)
        var notes: [String] = []
        var events: [CapturedEvent] = []
        events.reserveCapacity(self.events.count)
        for event in self.events {
            guard case .message(let opcode, let payload) = event.kind, opcode == 2 || opcode == 1 else {
                events.append(event)
                continue
            }
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            switch redactor.redact(CaptureRecord.Frame(time: event.time, direction: direction, bytes: payload)) {
            case .unchanged:
                events.append(event)
            case .records(let records):
                for record in records {
                    switch record {
                    case .frame(let frame):
                        var rewritten = event
                        rewritten.kind = .message(opcode: opcode, payload: frame.bytes)
                        events.append(rewritten)
                    case .note(_, let text):
                        notes.append("connection \(index): \(text)")
                    default:
                        break
                    }
                }
            }
        }
        copy.events = events
        return (copy, notes)
    }
}
