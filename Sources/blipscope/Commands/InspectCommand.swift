import ArgumentParser
import BLIPCore
import Capture
import Foundation
import Replication
import SyncGatewayLog

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode every BLIP message of a pcap/pcapng capture or a BlipScope capture file, both directions.",
        discussion: """
            By default one line per message, read in replication terms. --doc, --summary and --stuck show
            the session analyzer's views instead (per connection); --json works with all of them.
            """
    )

    @Argument(help: ArgumentHelp(
        "pcap or pcapng files (any link type libpcap reads), BlipScope capture files, or directories of them.",
        discussion: """
            Capture files are told apart by their first bytes and grouped by session: the parts of one
            session (`<session>-<n>.blipcap`, as `relay --capture DIR` writes them) are read in order as one
            continuous session, and a part also brings in the later parts next to it. Sessions come first,
            by name, then pcap files in the order given. A directory gives its .blipcap, .pcap and .pcapng
            files.
            """))
    var files: [String] = []

    @OptionGroup var output: RecordOutputOptions
    var json: Bool { output.json }
    var acks: Bool { output.acks }
    var frames: Bool { output.frames }
    var preview: Int { output.preview }

    @Option(help: "Only messages of this profile (a reply counts as its request's profile).")
    var profile: String?

    @Option(help: "The timeline of one document: offered, wanted, rev sent, accepted, attachments.")
    var doc: String?

    @Flag(help: "The session summary of each connection.")
    var summary = false

    @Flag(help: "Stuck replications and protocol violations, with their reasons.")
    var stuck = false

    @Option(name: .customLong("sg-log"), parsing: .upToNextOption, help: ArgumentHelp(
        "Sync Gateway log files (console output or sg_*.log, rotated .gz too) to show beside the sessions.",
        discussion: """
            Each session is matched by the X-Correlation-ID of its 101 (SG's context ID, c:[…] in its log);
            SG's line for a request it handled follows that request, its other lines the session's messages.
            """))
    var sgLog: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one capture file or directory") }
    }

    func run() throws {
        let inputs: [CaptureInput]
        do {
            inputs = try CaptureInputs.plan(files)
        } catch {
            throw CommandFailure(cause: "cannot read \(files.joined(separator: " ")): \(error)", hint: OptionCheck.captureHint)
        }
        let listMessages = doc == nil && !summary && !stuck
        var totals = (messages: 0, problems: 0, connections: 0)
        // With SG's logs, every input is read first: the log is read once, for the sessions' IDs.
        var reads: [(connections: [CapturedConnection], problems: Int)] = []
        var sgLines: SyncGatewayLog?
        if !sgLog.isEmpty {
            reads = try inputs.map(read)
            let ids = Set(reads.flatMap { $0.connections.compactMap(Self.correlationID) })
            do { sgLines = try SyncGatewayLog(reading: sgLog, correlationIDs: ids) } catch {
                throw CommandFailure(cause: error.description, hint: "give the console output or sg_*.log files Sync Gateway wrote")
            }
        }
        for (position, input) in inputs.enumerated() {
            let read = sgLines == nil ? try read(input) : reads[position]
            var connections = read.connections
            totals.problems += read.problems
            for index in connections.indices { connections[index].index += totals.connections }
            totals.connections += connections.count
            for connection in connections where connection.kind == .webSocket {
                let lines = Self.correlationID(of: connection).flatMap { id in sgLines.map { ($0.lines[id] ?? [], id, $0.dropped[id] ?? 0) } }
                let counts = inspect(connection, listMessages: listMessages, sgLines: lines)
                totals.messages += counts.messages
                totals.problems += counts.problems
            }
        }
        if listMessages && !json {
            print("# \(totals.messages) messages, \(totals.problems) problems, \(totals.connections) connections")
        }
    }

    /// The connections of one input (a relay session's parts as one), after its `#` lines, and
    /// the damage its files had.
    func read(_ input: CaptureInput) throws -> (connections: [CapturedConnection], problems: Int) {
        do {
            switch input {
            case .pcap(let path):
                if inputsAreSeveral && !json { print("# \(path)") }
                return (try importConnections(fromPcapAt: path), 0)
            case .session(let name, let paths, let missing):
                let imported = try CaptureFileImporter.importSession(paths: paths)
                if !json {
                    if inputsAreSeveral {
                        print("# session \(name): \(paths.count) part(s), \(paths.map { ($0 as NSString).lastPathComponent }.joined(separator: ", "))")
                    }
                    if !missing.isEmpty {
                        print("# session \(name): part(s) \(missing.map(String.init).joined(separator: ", ")) missing; what follows may not decode")
                    }
                    for line in CaptureFileReport.lines(for: imported) { print(line) }
                }
                return (imported.connections, CaptureFileReport.problems(in: imported))
            }
        } catch {
            throw CommandFailure(cause: "cannot read \(input.paths.joined(separator: ", ")): \(error)", hint: OptionCheck.captureHint)
        }
    }

    var inputsAreSeveral: Bool { files.count > 1 || files.contains { isDirectory($0) } }

    func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// Sync Gateway's context ID for the session: the 101's `X-Correlation-ID`.
    static func correlationID(of connection: CapturedConnection) -> String? {
        connection.response?.headers.values(for: "X-Correlation-ID").first
    }

    /// Lists or analyses one WebSocket connection; returns its message and problem counts.
    /// `sgLines`: Sync Gateway's lines of this session (``SyncGatewayLog``), shown beside its messages.
    func inspect(_ connection: CapturedConnection, listMessages: Bool,
                         sgLines: (lines: [SyncGatewayLogLine], id: String, dropped: Int)? = nil) -> (messages: Int, problems: Int) {
        var limits = AnalyzerLimits()
        if let doc { limits.trackedDocuments = [doc] }
        let analyzer = SessionAnalyzer(connection: connection.index, limits: limits)
        let subprotocol = connection.response?.headers.values(for: "Sec-WebSocket-Protocol").first
        analyzer.observeHandshake(subprotocol: subprotocol, user: nil, at: connection.events.first?.timestamp ?? 0)
        if listMessages && !json {
            print("# connection \(connection.index): \(connection.client) → \(connection.server) "
                  + "\(connection.request?.target ?? "?") \(subprotocol ?? "-")")
        }
        var messages = 0
        var problems = 0
        // With SG's lines, the listing waits for the session's end: SG's lines are laid by request.
        var listed: [(line: String, request: UInt64?)] = []
        var clientRequests: [(number: UInt64, profile: String?)] = []
        CaptureInspector(includeAcks: acks, includeFrames: frames).inspect(connection) { record in
            var record = record
            switch record.kind {
            case .message(let message):
                messages += 1
                record.summary = analyzer.observe(message: message, from: record.direction, at: record.timestamp).summary
                if let profile, (message.profile ?? record.requestProfile) != profile { return }
            case .ack(let ack):
                analyzer.observeAck(ack, from: record.direction, at: record.timestamp)
                if profile != nil { return }
            case .frame:
                if profile != nil { return }
            case .close(let code, let reason):
                analyzer.observeClose(from: record.direction, code: code.map(Int.init), reason: reason, at: record.timestamp)
                if profile != nil { return }
            case .error:
                problems += 1
            }
            guard listMessages else { return }
            let line = json ? record.jsonLine() : record.textLine(previewLength: preview)
            guard sgLines != nil else { return print(line) }
            var request: UInt64?
            if case .message(let message) = record.kind, message.type == .request, record.direction == .clientToServer {
                request = message.number
                clientRequests.append((message.number, message.profile))
            }
            listed.append((line, request))
        }
        if let sgLines, listMessages {
            printBeside(listed, sgLines, requests: clientRequests, connection: connection.index)
        }
        for drop in connection.dropsWithoutClose {
            // A stream's last event: after everything its sender sent.
            let direction: BLIPDirection = drop.direction == .clientToServer ? .clientToServer : .serverToClient
            analyzer.observeClose(from: direction, code: nil, reason: "TCP \(drop.kind == .fin ? "FIN" : "RST")", at: drop.timestamp)
            if listMessages && profile == nil { print(dropLine(drop, connection: connection.index)) }
        }
        if let doc { printTimeline(analyzer.timeline(docID: doc), doc: doc, connection: connection.index) }
        if summary { printSummary(analyzer.summary()) }
        if stuck { printFindings(analyzer.allFindings(now: .infinity), connection: connection.index) }
        return (messages, problems)
    }

    /// The session's listing with Sync Gateway's lines: each request SG handled is followed by
    /// SG's line for it; SG's other lines of the session follow the messages. JSON: one
    /// `{"conn", "type": "SGLOG", "number"?, "line"}` record per line.
    func printBeside(_ listed: [(line: String, request: UInt64?)], _ sg: (lines: [SyncGatewayLogLine], id: String, dropped: Int),
                             requests: [(number: UInt64, profile: String?)], connection: Int) {
        let join = SessionLogJoin(lines: sg.lines, requests: requests)
        func emit(_ line: SyncGatewayLogLine, number: UInt64?) {
            if json {
                print(ReplicationJSON.encode(SGLogRecord(conn: connection, number: number.map(Int.init), line: String(line.text))))
            } else {
                print("    SG " + line.text)
            }
        }
        if !json { print("# Sync Gateway c:[\(sg.id)]: \(sg.lines.count) lines" + (sg.dropped > 0 ? " (\(sg.dropped) more not kept)" : "")) }
        for entry in listed {
            print(entry.line)
            if let number = entry.request { for line in join.joined.byRequest[number] ?? [] { emit(line, number: number) } }
        }
        if !join.joined.session.isEmpty, !json { print("# Sync Gateway's other lines of c:[\(sg.id)]") }
        for line in join.joined.session { emit(line, number: nil) }
    }

    /// A TCP stream that ended without a WebSocket CLOSE: `DROP` with `tcp` FIN or RST in JSON.
    func dropLine(_ drop: TCPDrop, connection: Int) -> String {
        let from = drop.direction == .clientToServer ? "client" : "server"
        let kind = drop.kind == .fin ? "FIN" : "RST"
        guard !json else {
            return ReplicationJSON.encode(DropRecord(conn: connection, from: from, type: "DROP", tcp: kind, time: drop.timestamp))
        }
        let arrow = drop.direction == .clientToServer ? "C→S" : "S→C"
        return "\(InspectRecord.clock(drop.timestamp)) #\(connection) \(arrow) TCP \(kind) without WebSocket CLOSE"
    }
}

/// `inspect --json --sg-log`'s record of one of Sync Gateway's lines.
struct SGLogRecord: Encodable {
    var conn: Int
    var type = "SGLOG"
    var number: Int?
    var line: String
}

/// `inspect --json`'s record of a TCP stream that ended without a WebSocket CLOSE.
struct DropRecord: Encodable {
    var conn: Int
    var from: String
    var type: String
    var tcp: String
    var time: Double
}
