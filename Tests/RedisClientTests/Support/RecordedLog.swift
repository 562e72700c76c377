import Foundation
import Logging

/// The lines a client logged, message and metadata, for tests that check a reason was logged.
final class RecordedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }

    var logger: Logger {
        Logger(label: "test.redis") { _ in Handler(log: self) }
    }

    fileprivate func append(_ line: String) { lock.withLock { stored.append(line) } }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            log.append("\(event.level) \(event.message) \(fields.joined(separator: " "))")
        }
    }
}
