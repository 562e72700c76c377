import Capture
import Foundation

/// The captures the page offers for download: a session's `.blipcap` (its first part) from the
/// relay's `--capture` directory (this run's files, `<run>-<session>-<part>.blipcap`) or from the
/// files `blipscope web` opened, and a pcap made from that capture on request (client leg,
/// synthesized TCP, as `blipscope export` writes it) in the temporary directory, one file per
/// request, which the responder removes once it has it open.
///
/// Which sessions have a capture is one `stat` of the session's own first part per listed
/// session (at most the history's sessions), never a listing of the directory, which may hold
/// any number of files from earlier runs. Making the pcap reads the whole capture: the responder
/// runs it on NIO's thread pool, away from the event loops; it is meant for the occasional
/// download, not for heavy use.
public struct CaptureFileDownloads: CaptureDownloads {
    /// The relay's capture directory and the `<run>` of its file names.
    public var directory: (path: String, run: String)?
    public var files: [UInt64: String]

    public init(directory: String, run: String) {
        self.directory = (directory, run)
        self.files = [:]
    }

    public init(files: [UInt64: String]) {
        self.directory = nil
        self.files = files
    }

    public func captureFile(sessionID: UInt64) -> String? {
        if let file = files[sessionID] { return file }
        guard let directory else { return nil }
        let path = CaptureRotation(directory: directory.path, session: "\(directory.run)-\(sessionID)").path(part: 1)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    public func capturedSessions(among sessions: [UInt64]) -> Set<UInt64> {
        Set(sessions.filter { captureFile(sessionID: $0) != nil })
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
