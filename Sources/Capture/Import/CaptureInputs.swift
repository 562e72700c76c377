import Foundation

/// One thing `blipscope inspect` reads: a pcap or pcapng file, or one relay session's capture
/// files, read in part order as one continuous session (the deflate and CRC state runs across
/// parts, wire-format reference §3.2).
public enum CaptureInput: Sendable, Hashable {
    case pcap(path: String)
    /// `name`: the file name stem without its part number (`<session>` of
    /// `<session>-<n>.blipcap`); `missingParts`: part numbers absent between the first and the
    /// last (what follows a missing part may not decode).
    case session(name: String, paths: [String], missingParts: [UInt32])

    public var paths: [String] {
        switch self {
        case .pcap(let path): return [path]
        case .session(_, let paths, _): return paths
        }
    }
}

/// Turns the paths given to `inspect` (files and directories) into ``CaptureInput``s, in order:
/// relay sessions first, by session name (numbers in names compared as numbers, so
/// `…-2` comes before `…-10`), each session's parts by part number; then pcap files in the order
/// given (a directory's by name). A directory contributes its `.blipcap`, `.pcap` and `.pcapng`
/// files (not those of its subdirectories); a capture file given or found also brings the later
/// parts of its session that exist next to it (``CaptureRotation/partsStarting(at:)``).
public enum CaptureInputs {
    /// A file the planner sorts: its path and, for a BlipScope capture file, its header.
    public struct File: Sendable, Hashable {
        public var path: String
        public var header: CaptureFileHeader?

        public init(path: String, header: CaptureFileHeader?) {
            self.path = path
            self.header = header
        }
    }

    static let directoryExtensions: Set<String> = [CaptureFileFormat.fileExtension, "pcap", "pcapng"]

    /// Reads what `paths` name and plans them. Throws ``CaptureError`` for a path that does not
    /// exist or a capture file whose header cannot be read; an empty directory plans nothing.
    public static func plan(_ paths: [String]) throws -> [CaptureInput] {
        var files: [File] = []
        var seen: Set<String> = []
        func add(_ path: String) throws {
            let isCapture = CaptureFileFormat.kind(ofFileAt: path) == .captureFile
            let parts = isCapture ? CaptureRotation.partsStarting(at: path) : [path]
            for part in parts where seen.insert(part).inserted {
                files.append(File(path: part, header: isCapture ? try CaptureReader(path: part).header : nil))
            }
        }
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CaptureError.captureFileOpenFailed(path: path, reason: "no such file or directory")
            }
            guard isDirectory.boolValue else {
                try add(path)
                continue
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names.sorted(by: naturallyBefore)
            where directoryExtensions.contains((name as NSString).pathExtension.lowercased()) {
                try add((path as NSString).appendingPathComponent(name))
            }
        }
        return plan(files: files)
    }

    /// The pure part of ``plan(_:)``: groups capture files into sessions and orders everything.
    public static func plan(files: [File]) -> [CaptureInput] {
        struct SessionKey: Hashable { var name: String; var id: UInt64 }
        var sessions: [SessionKey: [(part: UInt32, path: String)]] = [:]
        var pcaps: [String] = []
        for file in files {
            guard let header = file.header else {
                pcaps.append(file.path)
                continue
            }
            let key = SessionKey(name: sessionName(of: file.path, part: header.part), id: header.sessionID)
            sessions[key, default: []].append((header.part, file.path))
        }
        let ordered = sessions.keys.sorted { $0.name == $1.name ? $0.id < $1.id : naturallyBefore($0.name, $1.name) }
        let sessionInputs = ordered.map { key -> CaptureInput in
            let parts = sessions[key]!.sorted { $0.part < $1.part }
            let present = Set(parts.map(\.part))
            let missing = parts.count < 2 ? [] : (parts.first!.part...parts.last!.part).filter { !present.contains($0) }
            return .session(name: key.name, paths: parts.map(\.path), missingParts: missing)
        }
        return sessionInputs + pcaps.map { .pcap(path: $0) }
    }

    /// `<session>` of `…/<session>-<part>.blipcap` when the name ends with the header's part
    /// number; otherwise the whole file name stem.
    static func sessionName(of path: String, part: UInt32) -> String {
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let suffix = "-\(part)"
        return stem.hasSuffix(suffix) && stem.count > suffix.count ? String(stem.dropLast(suffix.count)) : stem
    }

    /// Names compared with their runs of digits as numbers: `s-2` before `s-10`.
    static func naturallyBefore(_ a: String, _ b: String) -> Bool {
        var left = Substring(a), right = Substring(b)
        while let x = left.first, let y = right.first {
            if x.isASCII && x.isNumber && y.isASCII && y.isNumber {
                let l = left.prefix { $0.isASCII && $0.isNumber }, r = right.prefix { $0.isASCII && $0.isNumber }
                let ln = l.drop { $0 == "0" }, rn = r.drop { $0 == "0" }
                if ln.count != rn.count { return ln.count < rn.count }
                if ln != rn { return ln < rn }
                left = left.dropFirst(l.count)
                right = right.dropFirst(r.count)
            } else {
                if x != y { return x < y }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
        return left.isEmpty && !right.isEmpty
    }
}
