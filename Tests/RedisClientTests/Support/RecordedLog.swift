import Foundation
import Logging

/// The lines a client logged, message and metadata, for tests that check a reason was logged.
final class RecordedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    private var waiters: [(id: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiter = 0

    var lines: [String] { lock.withLock { stored } }

    /// Waits, at most `seconds`, for a line that satisfies `predicate`; fails the test
    /// (throws) with the lines logged so far if none came.
    func waitForLine(within seconds: Double = 30, where predicate: @escaping @Sendable (String) -> Bool) async throws {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let found = await withCheckedContinuation { continuation in
            let already = lock.withLock { () -> Bool in
                if stored.contains(where: predicate) { return true }
                waiters.append((id, predicate, continuation))
                return false
            }
            if already { continuation.resume(returning: true); return }
            Task {
                try? await Task.sleep(for: .seconds(seconds))  // the bound, not a synchronization
                let expired = self.lock.withLock { () -> CheckedContinuation<Bool, Never>? in
                    guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return self.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
        guard found else { throw RecordedLogTimeout(lines: lines) }
    }

    var logger: Logger {
        Logger(label: "test.redis") { _ in Handler(log: self) }
    }

    fileprivate func append(_ line: String) {
        let ready = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            stored.append(line)
            var ready: [CheckedContinuation<Bool, Never>] = []
            waiters.removeAll { waiter in
                guard waiter.predicate(line) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

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

struct RecordedLogTimeout: Error, CustomStringConvertible {
    let lines: [String]
    var description: String { "the log line waited for did not come; logged: \(lines)" }
}
