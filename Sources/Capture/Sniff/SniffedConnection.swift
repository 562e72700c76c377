import BLIPCore
import NIOCore

/// One live connection inside ``Sniffer``: its two ``SniffedDirection``s and the BLIP decoding
/// of what they deliver, full or mid-session.
final class SniffedConnection {
    let index: Int
    let client: Endpoint
    let server: Endpoint
    private(set) var lastSeen: CaptureTimestamp
    private var directions: [SniffedDirection]
    private var request: HTTPRequestHead?
    private var response: HTTPResponseHead?
    private var announced = false
    private var midSession = false
    private var inspection: ConnectionInspection
    private var midSessionDecoders: [MidSessionDecoder]
    private let includeAcks: Bool
    private var resets = false
    private let redactsSecrets: Bool
    /// Created with the first frame recorded, once it is known whether the upgrade was seen.
    private var redactor: CaptureRedactor?

    init(index: Int, first segment: TCPSegment, configuration: Sniffer.Configuration) {
        self.index = index
        let sourceIsClient: Bool
        if segment.flags.contains(.syn) {
            sourceIsClient = !segment.flags.contains(.ack)
        } else if let port = configuration.serverPort, segment.source.port == port || segment.destination.port == port {
            sourceIsClient = segment.destination.port == port
        } else {
            sourceIsClient = segment.source.port > segment.destination.port
        }
        (client, server) = sourceIsClient ? (segment.source, segment.destination) : (segment.destination, segment.source)
        lastSeen = segment.timestamp
        directions = [SniffedDirection(sender: .client, limits: configuration.limits),
                      SniffedDirection(sender: .server, limits: configuration.limits)]
        inspection = ConnectionInspection(connection: index, limits: configuration.blipLimits,
                                          includeAcks: configuration.includeAcks, includeFrames: configuration.includeFrames)
        midSessionDecoders = [MidSessionDecoder(direction: .clientToServer, limits: configuration.blipLimits),
                              MidSessionDecoder(direction: .serverToClient, limits: configuration.blipLimits)]
        includeAcks = configuration.includeAcks
        redactsSecrets = configuration.redactsSecrets
    }

    /// Both sides sent FIN, or one sent RST.
    var isFinished: Bool { resets || directions.allSatisfy(\.closed) }

    func receive(_ segment: TCPSegment, emit: (Sniffer.Output) -> Void) {
        lastSeen = max(lastSeen, segment.timestamp)
        if segment.flags.contains(.rst) { resets = true }
        let side = segment.source == client ? 0 : 1
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        var outputs = directions[side].receive(segment)
        while !outputs.isEmpty {
            let output = outputs.removeFirst()
            outputs += handle(output, direction: direction, time: segment.timestamp, emit: emit)
        }
    }

    /// Handles one output; returns outputs it caused in the other direction (after a 101).
    private func handle(
        _ output: SniffedDirection.Output, direction: BLIPDirection, time: CaptureTimestamp, emit: (Sniffer.Output) -> Void
    ) -> [SniffedDirection.Output] {
        switch output {
        case .request(let head):
            request = head
        case .response(let head):
            response = head
            var caused = directions[0].upgrade(switched: head.isSwitchingProtocols)
            if head.isSwitchingProtocols {
                announce(emit)
                emit(.captureRecord(connection: index, .handshake(handshakeRecord(time: time))))
            }
            // The client's frames that were waiting for the 101 travel client → server.
            for output in caused { _ = handle(output, direction: .clientToServer, time: time, emit: emit) }
            caused.removeAll()
            return caused
        case .midSession:
            if !midSession, response == nil {
                midSession = true
                announce(emit)
            }
        case .webSocket(let event):
            handleWebSocket(event, direction: direction, time: time, emit: emit)
        case .failed(let error):
            emitRecord(.error("capture: \(error)", frame: 0, fatal: true), direction: direction, time: time, emit: emit)
        }
        return []
    }

    private func handleWebSocket(
        _ event: WebSocketMessageParser.Output, direction: BLIPDirection, time: CaptureTimestamp,
        emit: (Sniffer.Output) -> Void
    ) {
        let kind: CapturedEvent.Kind
        switch event {
        case let .message(opcode, payload):
            record(.init(time: time, direction: direction, bytes: payload), emit: emit)
            kind = .message(opcode: opcode, payload: payload)
        case let .close(code, reason):
            let side: CaptureSide = direction == .clientToServer ? .client : .upstream
            emit(.captureRecord(connection: index, .close(.init(time: time, side: side, code: code, reason: reason))))
            kind = .close(code: code, reason: reason)
        case .ping, .pong:
            return
        case .error(let error):
            kind = .error(error)
        }
        if midSession, case .message(_, let payload) = kind {
            for record in midSessionDecoders[direction.rawValue].receive(payload, includeAcks: includeAcks) {
                emitRecord(record, direction: direction, time: time, emit: emit)
            }
            return
        }
        inspection.receive(kind, direction: direction, timestamp: time.secondsSince1970) { emit(.record($0)) }
    }

    /// Emits the capture record(s) for one frame: as seen, or with its secrets masked.
    private func record(_ frame: CaptureRecord.Frame, emit: (Sniffer.Output) -> Void) {
        guard redactsSecrets else {
            emit(.captureRecord(connection: index, .frame(frame)))
            return
        }
        let redactor = self.redactor ?? CaptureRedactor(joinedMidSession: midSession || response == nil)
        self.redactor = redactor
        switch redactor.redact(frame) {
        case .unchanged: emit(.captureRecord(connection: index, .frame(frame)))
        case .records(let records): for record in records { emit(.captureRecord(connection: index, record)) }
        }
    }

    private func emitRecord(_ kind: InspectRecord.Kind, direction: BLIPDirection, time: CaptureTimestamp,
                            emit: (Sniffer.Output) -> Void) {
        emit(.record(InspectRecord(connection: index, direction: direction, timestamp: time.secondsSince1970, kind: kind)))
    }

    private func announce(_ emit: (Sniffer.Output) -> Void) {
        guard !announced else { return }
        announced = true
        emit(.connectionOpened(index: index, client: client, server: server, request: request, response: response,
                               midSession: midSession))
    }

    /// The handshake as a capture record, secrets redacted.
    private func handshakeRecord(time: CaptureTimestamp) -> CaptureRecord.Handshake {
        let line = request.map { "\($0.method) \(HeaderRedaction.redactTarget($0.target)) \($0.version)" } ?? ""
        let host = request?.headers["Host"] ?? server.description
        let path = request.map { HeaderRedaction.redactTarget($0.target) } ?? "/"
        return CaptureRecord.Handshake(
            time: time, sessionID: UInt64(index), clientAddress: client.description, requestLine: line,
            requestHeaders: HeaderRedaction.redact(request?.headers ?? HTTPHeaderFields()),
            upstreamURL: "ws://\(host)\(path)", responseStatus: response?.status ?? 0,
            responseReason: response?.reason ?? "", responseHeaders: HeaderRedaction.redact(response?.headers ?? HTTPHeaderFields()),
            subprotocol: response?.headers.listValues(for: "Sec-WebSocket-Protocol").first
        )
    }
}
