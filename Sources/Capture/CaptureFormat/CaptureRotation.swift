import Foundation

/// Where one session's capture files go: `<directory>/<session>-<part>.blipcap`, part 1 first,
/// and a new part each time the current one reaches ``maxFileBytes``.
///
/// Rotation happens between records, after a flush; so a part may exceed the limit by up to one
/// flush's worth of records. Each new part starts with a copy of the session's handshake record
/// (its header's ``CaptureFileHeader/part`` tells a reader it is a continuation), so every part
/// names its session; decoding BLIP still needs the parts before it (the compression state runs
/// across the whole connection, wire-format reference §3.2).
public struct CaptureRotation: Sendable, Hashable {
    public var directory: String
    /// The file name stem: letters, digits, `-`, `_` and `.` only.
    public var session: String
    /// Start a new part once a file holds this many bytes; nil never rotates.
    public var maxFileBytes: Int?

    public init(directory: String, session: String, maxFileBytes: Int? = nil) {
        self.directory = directory
        self.session = session
        self.maxFileBytes = maxFileBytes
    }

    /// The path of part `part` (1-based).
    public func path(part: UInt32) -> String {
        (directory as NSString).appendingPathComponent("\(session)-\(part).\(CaptureFileFormat.fileExtension)")
    }

    /// Whether `session` is safe as a file name stem.
    public var hasValidSessionName: Bool {
        !session.isEmpty && !session.hasPrefix(".")
            && session.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) }
    }

    /// The parts of the session that exist on disk, in order, stopping at the first missing one.
    public func existingParts() -> [String] {
        var paths: [String] = []
        var part: UInt32 = 1
        while FileManager.default.fileExists(atPath: path(part: part)) {
            paths.append(path(part: part))
            part += 1
        }
        return paths
    }

    /// For a path named like a part (`…/<session>-<n>.blipcap`), that file and the parts after it
    /// that exist; otherwise just `path`.
    public static func partsStarting(at path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().lastPathComponent
        guard url.pathExtension == CaptureFileFormat.fileExtension, let dash = stem.lastIndex(of: "-"),
              let first = UInt32(stem[stem.index(after: dash)...]) else { return [path] }
        let rotation = CaptureRotation(directory: url.deletingLastPathComponent().path, session: String(stem[..<dash]))
        var paths = [path]
        var part = first + 1
        while FileManager.default.fileExists(atPath: rotation.path(part: part)) {
            paths.append(rotation.path(part: part))
            part += 1
        }
        return paths
    }
}
