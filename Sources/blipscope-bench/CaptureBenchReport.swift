import Capture
import Foundation

/// `bench relay --capture`: the size of what the relay child captured, per BLIP message (one
/// message-head record per message), read back after the child has exited (and so flushed).
struct CaptureBenchReport {
    let directory: String

    static func makeDirectory() -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("blipscope-bench-capture-\(ProcessInfo.processInfo.processIdentifier)").path
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    func print() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".\(CaptureFileFormat.fileExtension)") }
            .map { (directory as NSString).appendingPathComponent($0) }
        var bytes: Int64 = 0
        var messages = 0
        var frames = 0
        var dropped: UInt64 = 0
        for path in files {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            bytes += size
            let reader = try CaptureReader(path: path)
            while let record = try reader.next() {
                switch record {
                case .messageHead: messages += 1
                case .frame: frames += 1
                case .dropped(let record): dropped += record.count
                default: break
                }
            }
        }
        Swift.print(String(format: "capture: %d files, %.1f MB, %d messages, %d frames, %.1f bytes per message, %llu records dropped (%@)",
                           files.count, Double(bytes) / 1e6, messages, frames,
                           messages > 0 ? Double(bytes) / Double(messages) : 0, dropped, directory))
        try? FileManager.default.removeItem(atPath: directory)
    }
}
