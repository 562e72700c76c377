import ArgumentParser
import Capture
import CommandLineSupport

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a session's capture file (or a pcap) as a pcap that Wireshark's BLIP dissector decodes."
    )

    @Argument(help: "A BlipScope capture file (its later rotated parts are read too), or a pcap/pcapng file.")
    var session: String

    @Option(help: "The pcap file to write (replaced if it exists).")
    var pcap: String

    @Flag(help: "Keep secrets as the input has them: upgrade headers (Authorization, Cookie …) and BLIP property values (Authorization, Cookie, token, password …). By default they are redacted, the frames re-encoded so Wireshark still decodes them.")
    var captureSecrets = false

    func run() throws {
        let connections: [CapturedConnection]
        do {
            switch CaptureFileFormat.kind(ofFileAt: session) {
            case .captureFile:
                let imported = try importConnections(fromCaptureFileAt: session)
                for line in CaptureFileReport.lines(for: imported) { print(line) }
                connections = imported.connections
            case .pcap, .pcapng:
                connections = try importConnections(fromPcapAt: session)
            case .unknown:
                throw CommandFailure(cause: "\(session) is neither a BlipScope capture file nor a pcap/pcapng file", hint: OptionCheck.captureHint)
            }
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(cause: "cannot read \(session): \(error)", hint: OptionCheck.captureHint)
        }
        var exported = connections
        if captureSecrets {
            FileHandleOutput.standardError("warning: --capture-secrets: \(pcap) holds the secrets the input has (headers and BLIP property values)")
        } else {
            exported = connections.map { connection in
                let (redacted, notes) = connection.redactingSecrets()
                for note in notes { print("# \(note)") }
                return redacted
            }
        }
        let exporter = try PcapExporter(path: pcap)
        try exporter.export(exported)
        exporter.close()
        let streams = connections.filter { $0.request != nil }.count
        print("# wrote \(exporter.packetsWritten) packets, \(streams) TCP streams, to \(pcap)")
    }
}

/// What a capture file says about itself, as `#` comment lines: truncated or damaged tails,
/// dropped records, migrated and skipped records. Nothing lost is left unsaid.
enum CaptureFileReport {
    static func lines(for imported: CaptureFileImport) -> [String] {
        var lines: [String] = []
        for file in imported.files {
            switch file.ending {
            case .clean: break
            case let .truncated(offset, bytes):
                lines.append("# \(file.path): ends with an incomplete record (\(bytes) bytes at byte \(offset)); the writer stopped mid-write")
            case let .corrupt(offset, reason):
                lines.append("# \(file.path): damaged record at byte \(offset) (\(reason)); no valid record after it")
            }
            for range in file.damage where file.ending != .corrupt(offset: range.offset, reason: range.reason) {
                lines.append("# \(file.path): skipped \(range.bytes) damaged bytes at byte \(range.offset) (\(range.reason)); reading went on at the next valid record")
            }
            if file.migratedRecords > 0 { lines.append("# \(file.path): \(file.migratedRecords) records migrated from older versions") }
            if file.skippedRecords > 0 { lines.append("# \(file.path): \(file.skippedRecords) records of unknown kinds skipped") }
        }
        for dropped in imported.dropped {
            lines.append("# the capture dropped \(dropped.count) records: \(dropped.reason)")
        }
        return lines
    }

    /// Damage in the files (skipped stretches, a damaged tail), counted as problems.
    static func problems(in imported: CaptureFileImport) -> Int {
        imported.files.reduce(0) { $0 + $1.damage.count }
    }
}
