import ArgumentParser
import BLIPCore
import Capture
import Replication

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode every BLIP message of a pcap/pcapng capture or a BlipScope capture file, both directions.",
        discussion: """
            By default one line per message, read in replication terms. --doc, --summary and --stuck show
            the session analyzer's views instead (per connection); --json works with all of them.
            """
    )

    @Argument(help: "A pcap or pcapng file (any link type libpcap reads), or a BlipScope capture file (told apart by their first bytes; a capture's later rotated parts are read too).")
    var file: String = ""

    @OptionGroup var output: RecordOutputOptions
    var json: Bool { output.json }
    var acks: Bool { output.acks }
    var preview: Int { output.preview }

    @Option(help: "Only messages of this profile (a reply counts as its request's profile).")
    var profile: String?

    @Option(help: "The timeline of one document: offered, wanted, rev sent, accepted, attachments.")
    var doc: String?

    @Flag(help: "The session summary of each connection.")
    var summary = false

    @Flag(help: "Stuck replications and protocol violations, with their reasons.")
    var stuck = false

    func run() throws {
        let connections: [CapturedConnection]
        do {
            if CaptureFileFormat.kind(ofFileAt: file) == .captureFile {
                let imported = try importConnections(fromCaptureFileAt: file)
                if !json { for line in CaptureFileReport.lines(for: imported) { print(line) } }
                connections = imported.connections
            } else {
                connections = try importConnections(fromPcapAt: file)
            }
        } catch {
            throw ValidationError("cannot read \(file): \(error)")
        }
        let inspector = CaptureInspector(includeAcks: acks)
        let listMessages = doc == nil && !summary && !stuck
        var messages = 0
        var problems = 0
        for connection in connections where connection.kind == .webSocket {
            var limits = AnalyzerLimits()
            if let doc { limits.trackedDocuments = [doc] }
            let analyzer = SessionAnalyzer(connection: connection.index, limits: limits)
            let subprotocol = connection.response?.headers.values(for: "Sec-WebSocket-Protocol").first
            analyzer.observeHandshake(subprotocol: subprotocol, user: nil, at: connection.events.first?.timestamp ?? 0)
            if listMessages && !json {
                print("# connection \(connection.index): \(connection.client) → \(connection.server) "
                      + "\(connection.request?.target ?? "?") \(subprotocol ?? "-")")
            }
            inspector.inspect(connection) { record in
                var record = record
                switch record.kind {
                case .message(let message):
                    messages += 1
                    record.summary = analyzer.observe(message: message, from: record.direction, at: record.timestamp).summary
                    if let profile, (message.profile ?? record.requestProfile) != profile { return }
                case .ack(let ack):
                    analyzer.observeAck(ack, from: record.direction, at: record.timestamp)
                    if profile != nil { return }
                case .close(let code, let reason):
                    analyzer.observeClose(from: record.direction, code: code.map(Int.init), reason: reason, at: record.timestamp)
                    if profile != nil { return }
                case .error:
                    problems += 1
                }
                if listMessages { print(json ? record.jsonLine() : record.textLine(previewLength: preview)) }
            }
            if let doc { printTimeline(analyzer.timeline(docID: doc), doc: doc, connection: connection.index) }
            if summary { printSummary(analyzer.summary()) }
            if stuck { printFindings(analyzer.allFindings(now: .infinity), connection: connection.index) }
        }
        if listMessages && !json {
            print("# \(messages) messages, \(problems) problems, \(connections.count) connections")
        }
    }

    private func printTimeline(_ events: [TimelineEvent], doc: String, connection: Int) {
        if json {
            for event in events { print(ReplicationJSON.encode(event)) }
            return
        }
        print("# connection \(connection): timeline of \(doc), \(events.count) events")
        for event in events {
            let arrow = event.from == .clientToServer ? "C→S" : "S→C"
            var line = "\(InspectRecord.clock(event.time)) \(arrow) \(event.type)#\(event.number) \(event.profile) \(event.kind.rawValue)"
            if let revID = event.revID { line += " \(revID)" }
            if event.deleted { line += " (deleted)" }
            if let bytes = event.bytes { line += " \(bytes) B" }
            if let history = event.historyCount { line += " hist \(history)" }
            if let attachments = event.attachmentCount, attachments > 0 { line += " \(attachments) attachment(s)" }
            if let note = event.note { line += " — \(note)" }
            if let latency = event.latency { line += String(format: " (%.1f ms)", latency * 1000) }
            print(line)
        }
    }

    private func printSummary(_ summary: ReplicationSummary) {
        if json {
            print(ReplicationJSON.encode(summary))
            return
        }
        print("# connection \(summary.connection): \(summary.replicationType)"
              + (summary.continuous.map { $0 ? ", continuous" : ", one-shot" } ?? "")
              + ", \(summary.subprotocol ?? "no sub-protocol"), \(summary.collectionMode)")
        print("  messages: \(summary.messagesFromClient) from client, \(summary.messagesFromServer) from server; "
              + "bytes: \(summary.bytesFromClient) / \(summary.bytesFromServer)")
        print("  pushed: \(describe(summary.pushed))")
        print("  pulled: \(describe(summary.pulled))")
        print("  conflicts: \(summary.conflicts), checkpoint conflicts: \(summary.checkpointConflicts), "
              + "caught up: \(summary.caughtUp)" + (summary.secondsToCaughtUp.map { String(format: " after %.3f s", $0) } ?? ""))
        if !summary.errorsByDomainAndCode.isEmpty {
            print("  errors: " + summary.errorsByDomainAndCode.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
        }
        for profile in summary.profiles {
            var line = "  \(profile.profile): \(profile.requests) requests, \(profile.replies) replies, \(profile.errors) errors"
            if profile.noReply > 0 { line += ", \(profile.noReply) no-reply" }
            if let average = profile.latencyAverage, let maximum = profile.latencyMax {
                line += String(format: ", latency avg %.2f ms max %.2f ms", average * 1000, maximum * 1000)
            }
            print(line)
        }
        for close in summary.closes {
            print("  close from \(close.from ?? "?"): \(close.code.map(String.init) ?? "-") \(close.reason)")
        }
    }

    private func describe(_ counts: TransferCounts) -> String {
        "\(counts.documents)\(counts.documentsCountIsLowerBound ? "+" : "") docs, \(counts.revisionsOffered) revs offered, "
            + "\(counts.revisionsWanted) wanted, \(counts.revisionsSent) sent (\(counts.revisionBytes) B), "
            + "\(counts.revisionsAccepted) accepted, \(counts.revisionsRefused) refused, \(counts.norevs) norev, "
            + "\(counts.tombstones) tombstones, \(counts.attachmentsSent) attachments (\(counts.attachmentBytes) B)"
    }

    private func printFindings(_ findings: [Finding], connection: Int) {
        if json {
            for finding in findings { print(ReplicationJSON.encode(finding)) }
            return
        }
        print("# connection \(connection): \(findings.count) findings")
        for finding in findings { print("  \(finding)") }
    }
}
