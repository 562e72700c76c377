import Foundation
import Logging

/// A swift-log handler that writes each message as one line, as it is: the relay's observers
/// already format their lines (text or JSON), so nothing is added but a newline. Lines go to
/// standard output or to a file opened for appending; writes are serialized by a lock.
struct LineLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        // FileHandle writes are not atomic across threads; the lock keeps lines whole.
        private let lock = NSLock()
        private let handle: FileHandle

        init(handle: FileHandle) { self.handle = handle }

        static let standardOutput = Sink(handle: .standardOutput)

        static func appending(to path: String) throws -> Sink {
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            handle.seekToEndOfFile()
            return Sink(handle: handle)
        }

        func write(_ line: String) {
            var data = Data(line.utf8)
            data.append(0x0A)
            lock.lock()
            defer { lock.unlock() }
            handle.write(data)
        }
    }

    let sink: Sink
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(sink: Sink, level: Logger.Level) {
        self.sink = sink
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink.write(event.message.description)
    }
}
