import Capture
import Foundation

/// The captures the page offers for download: a session's `.blipcap` (its first part) from the
/// relay's `--capture` directory (files named `<run>-<session>-<part>.blipcap`) or from the files
/// `blipscope web` opened, and a pcap made from that capture on request (client leg, synthesized
/// TCP, as `blipscope export` writes it) in the temporary directory, one file per request, which
/// the responder removes once it has it open.
///
/// Making the pcap reads the whole capture: the responder runs it on NIO's thread pool, away from
/// the event loops; it is meant for the occasional download, not for heavy use.
public struct CaptureFileDownloads: CaptureDownloads {
    public var directory: String?
    public var files: [UInt64: String]

    public init(directory: String? = nil, files: [UInt64: String] = [:]) {
        self.directory = directory
        self.files = files
    }

    public func captureFile(sessionID: UInt64) -> String? {
        if let file = files[sessionID] { return file }
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        let suffix = "-\(sessionID)-1.\(CaptureFileFormat.fileExtension)"
        let paths = names.filter { $0.hasSuffix(suffix) }.map { (directory as NSString).appendingPathComponent($0) }
        // Several runs may have had a session of this number: the newest file is this run's.
        return paths.max { modified($0) < modified($1) }
    }

    public func capturedSessions() -> Set<UInt64> {
        var sessions = Set(files.keys)
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return sessions }
        let suffix = "-1.\(CaptureFileFormat.fileExtension)"
        for name in names where name.hasSuffix(suffix) {
            // `<run>-<session>-1.blipcap`: the session is the part before the last dash.
            let parts = name.dropLast(suffix.count).split(separator: "-")
            if let last = parts.last, parts.count >= 2, let id = UInt64(last) { sessions.insert(id) }
        }
        return sessions
    }

    private func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    public func pcapFile(sessionID: UInt64) -> String? {
        guard let capture = captureFile(sessionID: sessionID) else { return nil }
        let parts = CaptureRotation.partsStarting(at: capture)
        guard let imported = try? CaptureFileImporter.importSession(paths: parts.isEmpty ? [capture] : parts) else { return nil }
        // A file per request: two downloads at once must not write the same file.
        let name = "blipscope-web-\(getpid())-\(sessionID)-\(UUID().uuidString).pcap"
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent(name)
        guard let exporter = try? PcapExporter(path: path) else { return nil }
        let exported = (try? exporter.export(imported.connections)) != nil
        exporter.close()
        guard exported else {
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
        return path
    }
}
