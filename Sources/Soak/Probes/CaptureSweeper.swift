import Capture
import Foundation

/// Keeps a long soak's capture on bounded disk: at each sweep, a capture file whose size has not
/// changed since the sweep before is taken as finished (its session closed or its part rotated),
/// one in ``readBackEvery`` of those is read back record by record, and it is removed. A file
/// removed while the relay still holds it open only frees its space at the close; the disk in use
/// is then about what the live sessions have written since their last rotation.
final class CaptureSweeper {
    let directory: String
    let readBackEvery: Int
    private(set) var counts = CaptureSweepCounts()
    private var sizes: [String: Int64] = [:]
    private var finishedSeen = 0

    init(directory: String, readBackEvery: Int) {
        self.directory = directory
        self.readBackEvery = max(1, readBackEvery)
    }

    /// One sweep; `final` takes every file as finished (the relay has stopped).
    func sweep(final: Bool = false) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var current: [String: Int64] = [:]
        for name in names where name.hasSuffix(".\(CaptureFileFormat.fileExtension)") {
            let path = (directory as NSString).appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            current[path] = size
        }
        counts.peakDiskBytes = max(counts.peakDiskBytes, current.values.reduce(0, +))
        for (path, size) in current.sorted(by: { $0.key < $1.key }) where final || sizes[path] == size {
            finishedSeen += 1
            if finishedSeen % readBackEvery == 1 || readBackEvery == 1 { readBack(path, size: size) }
            try? FileManager.default.removeItem(atPath: path)
            counts.filesRemoved += 1
            counts.bytesRemoved += size
            current[path] = nil
        }
        sizes = current
    }

    private func readBack(_ path: String, size: Int64) {
        guard size >= Int64(CaptureFileHeader.size) else { return }
        guard let reader = try? CaptureReader(path: path) else {
            counts.unreadableFiles += 1
            return
        }
        do {
            while try reader.next() != nil {}
        } catch {
            counts.unreadableFiles += 1
        }
        counts.filesReadBack += 1
        counts.recordsReadBack += reader.recordsRead
        counts.damagedBytes += reader.damage.reduce(0) { $0 + $1.bytes }
        if case .corrupt = reader.ending { counts.unreadableFiles += 1 }
    }
}
