import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test, with its standard output and error gathered as they come.
/// Every wait is bounded; a command still running when the test lets go of it is killed.
public final class RunningCommand: @unchecked Sendable {
    public let process: Process
    public let output: CommandOutput
    public let errors: CommandOutput
    private let termination = CommandOutput()

    init(executable: URL, arguments: [String], directory: URL?) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let outputPipe = Pipe(), errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        output = CommandOutput(outputPipe.fileHandleForReading)
        errors = CommandOutput(errorPipe.fileHandleForReading)
        let termination = self.termination
        process.terminationHandler = { process in termination.append("\(process.terminationStatus)\n".utf8) }
        try process.run()
    }

    deinit { kill() }

    public var processIdentifier: Int32 { process.processIdentifier }

    /// Waits (at most `seconds`) until standard error contains `needle`; returns its text. The
    /// failure (also when the stream ends without it) shows what the command had written.
    @discardableResult
    public func waitForError(containing needle: String, within seconds: Double = 30) async throws -> String {
        try await errors.wait(within: seconds, describing: self) { $0.contains(needle) }
    }

    /// The port a listener announces on standard error (`blipscope gateway listening on
    /// ws://127.0.0.1:40123, …`): the first `:PORT` after `marker`, once its line is complete.
    public func announcedPort(after marker: String = "listening on ", within seconds: Double = 30) async throws -> Int {
        let text = try await errors.wait(within: seconds, describing: self) { text in
            guard let range = text.range(of: marker) else { return false }
            return text[range.upperBound...].contains("\n")
        }
        guard let port = BlipscopeExecutable.port(after: marker, in: text) else {
            throw CommandFailure("no port after \"\(marker)\":\n\(summary)")
        }
        return port
    }

    /// Waits (at most `seconds`) until standard output satisfies `predicate`; fails when the
    /// stream ends without it.
    @discardableResult
    public func waitForOutput(within seconds: Double = 30,
                              until predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await output.wait(within: seconds, describing: self, until: predicate)
    }

    /// Waits (at most `seconds`) for the command to end, and for both its outputs to be read to
    /// their end; returns its exit status.
    public func waitForExit(within seconds: Double = 60) async throws -> Int32 {
        let status = try await termination.wait(within: seconds, describing: self) { !$0.isEmpty }
        _ = try await output.waitForEnd(within: 10, describing: self)
        _ = try await errors.waitForEnd(within: 10, describing: self)
        return Int32(status.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Sends `signal` (SIGINT by default: Ctrl-C) and waits, at most `seconds`, for the end.
    public func stop(_ signal: Int32 = SIGINT, within seconds: Double = 30) async throws -> Int32 {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
        return try await waitForExit(within: seconds)
    }

    /// Ends the command at once if it is still running (SIGKILL); for `defer`.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    var summary: String {
        let arguments = (process.arguments ?? []).joined(separator: " ")
        return "blipscope \(arguments)\n--- stdout:\n\(output.text.suffix(4000))\n--- stderr:\n\(errors.text.suffix(4000))"
    }
}

/// Text a child process writes to one stream, gathered as it arrives, with bounded waits for
/// what it should come to contain.
public final class CommandOutput: @unchecked Sendable {
    private let lock = NSLock()
    /// Bytes, not text: a read may end inside a character (`→` is three bytes).
    private var bytes: [UInt8] = []
    private var collected: String { String(decoding: bytes, as: UTF8.self) }
    private var ended = false
    private var waiters: [(id: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = []
    private var nextWaiter = 0

    init() {}

    /// Reads `handle` to its end on a thread of its own (blocking reads: a readability handler
    /// can miss the end of a stream that closes right after its last write).
    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                append(buffer[0..<count])
            }
            try? handle.close()
            end()
        }
    }

    /// Everything written so far.
    public var text: String { lock.withLock { collected } }

    /// The lines written so far (complete or not).
    public var lines: [String] { text.split(separator: "\n").map(String.init) }

    func append<Bytes: Sequence<UInt8>>(_ more: Bytes) {
        let ready = lock.withLock { () -> [(CheckedContinuation<String?, Never>, String?)] in
            bytes.append(contentsOf: more)
            return takeSatisfied()
        }
        for (continuation, text) in ready { continuation.resume(returning: text) }
    }

    private func end() {
        let ready = lock.withLock { () -> [(CheckedContinuation<String?, Never>, String?)] in
            ended = true
            return takeSatisfied()
        }
        for (continuation, text) in ready { continuation.resume(returning: text) }
    }

    /// Under the lock: the waiters whose predicate now holds, removed with the text; once the
    /// stream has ended, the others too, with nil (it will never hold).
    private func takeSatisfied() -> [(CheckedContinuation<String?, Never>, String?)] {
        var ready: [(CheckedContinuation<String?, Never>, String?)] = []
        guard !waiters.isEmpty else { return [] }
        let text = collected
        let marker = ended ? text + Self.endMarker : text
        waiters.removeAll { waiter in
            if waiter.predicate(marker) {
                ready.append((waiter.continuation, text))
                return true
            }
            guard ended else { return false }
            ready.append((waiter.continuation, nil))
            return true
        }
        return ready
    }

    /// Appended to the text a predicate sees once the stream has ended.
    static let endMarker = "\u{0}EOF"

    func waitForEnd(within seconds: Double, describing command: RunningCommand) async throws -> String {
        try await wait(within: seconds, describing: command) { $0.hasSuffix(Self.endMarker) }
    }

    /// The text once `predicate` holds for it; throws, with what the command wrote, after `seconds`.
    func wait(within seconds: Double, describing command: RunningCommand,
              until predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let result: String? = await withCheckedContinuation { continuation in
            let settled = lock.withLock { () -> String?? in
                let text = collected
                if predicate(ended ? text + Self.endMarker : text) { return .some(text) }
                if ended { return .some(nil) }
                waiters.append((id, predicate, continuation))
                return nil
            }
            if let settled { continuation.resume(returning: settled); return }
            Task {
                try? await Task.sleep(for: .seconds(seconds))  // the bound, not a synchronization
                let expired = self.lock.withLock { () -> CheckedContinuation<String?, Never>? in
                    guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return self.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
        }
        guard let result else {
            throw CommandFailure("the output a test waited for did not come (within \(seconds) s, or before the "
                                 + "stream ended):\n\(command.summary)")
        }
        return result
    }
}
