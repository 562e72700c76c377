import BLIPCore
import Capture
import Replication

/// Fills a ``SessionHistory`` from capture files (`.blipcap` sessions and pcaps), the way
/// `blipscope inspect` reads them: every WebSocket connection becomes a closed session, each of
/// its messages read by its own ``SessionAnalyzer`` as it was on the wire. Times are the
/// capture's (seconds since 1970).
public enum CaptureHistoryLoader {
    /// What was read: the files' sessions, and the captures that could not be read, with why.
    public struct Loaded: Sendable {
        public var sessions = 0
        public var messages = 0
        public var failures: [String] = []
        /// The `.blipcap` file of each session read from one (for the page's download link).
        public var captureFiles: [UInt64: String] = [:]
    }

    public static func load(_ paths: [String], into history: SessionHistory) throws -> Loaded {
        var loaded = Loaded()
        var nextID: UInt64 = 1
        for input in try CaptureInputs.plan(paths) {
            let connections: [CapturedConnection]
            var source: String
            switch input {
            case .pcap(let path):
                source = path
                do { connections = try importConnections(fromPcapAt: path) } catch {
                    loaded.failures.append("\(path): \(error)")
                    continue
                }
            case .session(let name, let files, _):
                source = name
                do { connections = try CaptureFileImporter.importSession(paths: files).connections } catch {
                    loaded.failures.append("\(name): \(error)")
                    continue
                }
                if let first = files.first { loaded.captureFiles[nextID] = first }
            }
            for connection in connections where connection.kind == .webSocket {
                loaded.messages += record(connection, id: nextID, source: source, into: history)
                loaded.sessions += 1
                nextID += 1
            }
        }
        return loaded
    }

    /// Records one connection as a closed session; returns its message count.
    static func record(_ connection: CapturedConnection, id: UInt64, source: String, into history: SessionHistory) -> Int {
        let start = connection.events.first?.timestamp ?? 0
        let subprotocol = connection.response?.headers.values(for: "Sec-WebSocket-Protocol").first
        let analyzer = SessionAnalyzer(connection: Int(truncatingIfNeeded: id))
        analyzer.observeHandshake(subprotocol: subprotocol, user: nil, at: start)
        let path = connection.request?.path ?? "/"
        let database = path.split(separator: "/").first.map(String.init) ?? ""
        let description = SessionDescription(id: id, clientAddress: "\(connection.client)", user: nil, database: database,
                                             upstream: "\(connection.server)", subprotocol: subprotocol,
                                             startedWallClock: start, source: source,
                                             correlationID: connection.response?.headers.values(for: "X-Correlation-ID").first)
        guard history.open(description, analyzer: analyzer, at: start) != nil else { return 0 }
        var messages = 0
        var end = start
        var closeReason = "capture ended"
        CaptureInspector(includeAcks: true, includeFrames: true).inspect(connection) { record in
            end = max(end, record.timestamp)
            switch record.kind {
            case .message(let message):
                messages += 1
                let analysis = analyzer.observe(message: message, from: record.direction, at: record.timestamp)
                let profile = message.type == .request ? message.profile : record.requestProfile
                history.append(sessionID: id, message, direction: record.direction, time: record.timestamp,
                               profile: analysis.profile ?? profile, analysis: analysis, roundTrip: record.roundTrip)
            case .frame(let number, let flags, let wireBytes):
                history.frame(sessionID: id, direction: record.direction, number: number, flags: flags,
                              wireBytes: wireBytes, time: record.timestamp)
            case .ack(let ack):
                analyzer.observeAck(ack, from: record.direction, at: record.timestamp)
                history.ack(sessionID: id, ack, from: record.direction, time: record.timestamp)
            case .close(let code, let reason):
                analyzer.observeClose(from: record.direction, code: code.map(Int.init), reason: reason, at: record.timestamp)
                closeReason = "\(record.direction == .clientToServer ? "client" : "server") closed \(code.map(String.init) ?? "") \(reason)"
            case .error:
                break
            }
        }
        for drop in connection.dropsWithoutClose {
            let direction: BLIPDirection = drop.direction == .clientToServer ? .clientToServer : .serverToClient
            analyzer.observeClose(from: direction, code: nil, reason: "TCP \(drop.kind == .fin ? "FIN" : "RST")", at: drop.timestamp)
            end = max(end, drop.timestamp)
        }
        history.close(sessionID: id, reason: closeReason, at: end)
        return messages
    }
}
