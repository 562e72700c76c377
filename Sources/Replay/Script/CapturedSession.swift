import BLIPCore
import Capture

/// One WebSocket session read from a capture, decoded into BLIP messages: the input of a
/// ``ReplayScript``. Reads BlipScope capture files and pcap/pcapng files through the same import
/// path `blipscope inspect` uses (told apart by their first bytes).
public struct CapturedSession: Sendable {
    /// The session's connection index in the file (`--session`).
    public var id: Int
    public var handshake: RecordedHandshake
    public var messages: [RecordedMessage]
    /// Decoding problems (bad checksum, inflate failure, cut stream) met while reading it.
    public var problems: [String]

    /// The WebSocket sessions in the file at `path`, in file order, each decoded.
    public static func load(path: String) throws(ReplayError) -> [CapturedSession] {
        let connections: [CapturedConnection]
        do {
            if CaptureFileFormat.kind(ofFileAt: path) == .captureFile {
                connections = try importConnections(fromCaptureFileAt: path).connections
            } else {
                connections = try importConnections(fromPcapAt: path)
            }
        } catch {
            throw .unreadableCapture("\(path): \(error)")
        }
        return connections.filter { $0.kind == .webSocket }.map(CapturedSession.init(decoding:))
    }

    /// The session numbered `id`, or the first one when `id` is nil.
    public static func load(path: String, session id: Int?) throws(ReplayError) -> CapturedSession {
        let sessions = try load(path: path)
        guard let first = sessions.first else { throw .noSession("\(path) holds no WebSocket session") }
        guard let id else { return first }
        guard let chosen = sessions.first(where: { $0.id == id }) else {
            throw .noSession("\(path) has no session \(id); it has \(sessions.map { String($0.id) }.joined(separator: ", "))")
        }
        return chosen
    }

    /// Decodes every frame of `connection` (checksums, inflation, assembly) into messages.
    public init(decoding connection: CapturedConnection) {
        id = connection.index
        let request = connection.request
        let headers = request.map { $0.headers.map { (name: $0.name, value: $0.value) } } ?? []
        handshake = RecordedHandshake(
            target: request?.target ?? "/db/_blipsync", requestHeaders: headers,
            offeredSubprotocols: request?.headers.listValues(for: "Sec-WebSocket-Protocol") ?? [],
            subprotocol: connection.response?.headers["Sec-WebSocket-Protocol"])
        let start = connection.events.first?.timestamp ?? 0
        var messages: [RecordedMessage] = []
        var problems: [String] = []
        CaptureInspector().inspect(connection) { record in
            switch record.kind {
            case .message(let message):
                messages.append(RecordedMessage(direction: record.direction, message: message,
                                                time: max(0, record.timestamp - start)))
            case .error(let text, _, _):
                problems.append("\(record.direction): \(text)")
            case .ack, .frame, .close:
                break
            }
        }
        self.messages = messages
        self.problems = problems
    }

    /// The script of `side` for this session.
    public func script(for side: ReplaySide) -> ReplayScript {
        var script = ReplayScript(side: side, handshake: handshake, messages: messages)
        script.captureProblems = problems
        return script
    }
}
