import Foundation

/// Sync Gateway's log lines of the replications a capture or a relay saw, by correlation ID
/// (`X-Correlation-ID` of the session's 101), in the order written; read from console output or
/// `sg_*.log` files, rotated `.gz` ones too (``GzipFile``). Only the lines of the wanted IDs are
/// kept, at most ``SyncGatewayLogLimits/maxLinesPerSession`` each.
public struct SyncGatewayLog: Sendable {
    public private(set) var lines: [String: [SyncGatewayLogLine]] = [:]
    /// Lines of a wanted ID past its limit, per ID.
    public private(set) var dropped: [String: Int] = [:]
    public let limits: SyncGatewayLogLimits

    public init(limits: SyncGatewayLogLimits = SyncGatewayLogLimits()) { self.limits = limits }

    /// Reads `paths` (in the order given; rotated files sort by their names' timestamps, so give
    /// them oldest first) and keeps the lines of `correlationIDs`.
    public init(reading paths: [String], correlationIDs: Set<String>,
                limits: SyncGatewayLogLimits = SyncGatewayLogLimits()) throws(SyncGatewayLogError) {
        self.init(limits: limits)
        for path in paths {
            let text = try Self.contents(of: path, limit: limits.maxFileBytes)
            add(text, keeping: correlationIDs)
        }
    }

    /// Adds the lines of `text` whose correlation ID is wanted.
    public mutating func add(_ text: String, keeping correlationIDs: Set<String>) {
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var raw = rawLine
            if raw.last == "\r" { raw = raw.dropLast() }
            // Cheap test first: most lines of a busy gateway belong to other replications.
            guard raw.contains("c:["), var line = SyncGatewayLogLine(raw),
                  let id = line.correlationID.map(String.init), correlationIDs.contains(id) else { continue }
            if line.text.utf8.count > limits.maxLineBytes {
                // Cut at the limit (a character the cut splits becomes U+FFFD).
                line = SyncGatewayLogLine(Substring(String(decoding: line.text.utf8.prefix(limits.maxLineBytes), as: UTF8.self))) ?? line
            }
            if lines[id, default: []].count >= limits.maxLinesPerSession {
                dropped[id, default: 0] += 1
            } else {
                lines[id, default: []].append(line)
            }
        }
    }

    /// The text of `path`, decompressed when it is a gzip file.
    static func contents(of path: String, limit: Int) throws(SyncGatewayLogError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SyncGatewayLogError(path: path, reason: FileManager.default.fileExists(atPath: path)
                                      ? "cannot be read (permissions?)" : "no such file")
        }
        let bytes = [UInt8](data)
        let plain: [UInt8]
        if bytes.count >= 2, bytes[0] == 0x1f, bytes[1] == 0x8b {
            do { plain = try GzipFile.decompress(bytes, limit: limit) } catch {
                throw SyncGatewayLogError(path: path, reason: "not a readable gzip file (\(error.reason))")
            }
        } else {
            guard bytes.count <= limit else {
                throw SyncGatewayLogError(path: path, reason: "larger than \(limit) bytes")
            }
            plain = bytes
        }
        return String(decoding: plain, as: UTF8.self)
    }
}
