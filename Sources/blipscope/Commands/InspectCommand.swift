import ArgumentParser
import BLIPCore
import Capture

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode every BLIP message of a pcap/pcapng capture or a BlipScope capture file, both directions."
    )

    @Argument(help: "A pcap or pcapng file (any link type libpcap reads), or a BlipScope capture file (told apart by their first bytes; a capture's later rotated parts are read too).")
    var file: String = ""

    @Flag(help: "One JSON object per line instead of text.")
    var json = false

    @Flag(help: "Also list ACK frames.")
    var acks = false

    @Option(help: "Characters of body preview in text output.")
    var preview = 60

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
        var messages = 0
        var problems = 0
        for connection in connections where connection.kind == .webSocket {
            if !json {
                let protocolName = connection.response?.headers.values(for: "Sec-WebSocket-Protocol").first ?? "-"
                print("# connection \(connection.index): \(connection.client) → \(connection.server) "
                      + "\(connection.request?.target ?? "?") \(protocolName)")
            }
            inspector.inspect(connection) { record in
                switch record.kind {
                case .message: messages += 1
                case .error: problems += 1
                default: break
                }
                print(json ? record.jsonLine() : record.textLine(previewLength: preview))
            }
        }
        if !json {
            print("# \(messages) messages, \(problems) problems, \(connections.count) connections")
        }
    }
}
