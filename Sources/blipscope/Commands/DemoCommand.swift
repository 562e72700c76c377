import ArgumentParser
import CommandLineSupport
import Foundation
import Logging
import Relay

/// `blipscope demo` (`make demo`): a whole replication through the relay in one process — see
/// ``DemoScenario`` — with the relay's decoded log live, a summary, and how to do the same with
/// a real Sync Gateway. Ends by itself; exits non-zero, saying why, when a step goes wrong or the
/// whole run takes longer than `--timeout`.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Replicate the sample documents through the relay and the embedded gateway, logging every BLIP message.",
        discussion: """
            Starts the embedded gateway (seeded with --docs) and a relay in front of it, both on free \
            loopback ports; pulls every document through the relay, then pushes a new document with \
            an attachment, a changed one, a deletion and a deliberate conflict. The relay's decoded \
            log goes to standard output (or --log-file).
            """
    )

    @Option(help: "Seed documents for the gateway.")
    var docs = "samples/demo-docs.json"

    @Option(help: "Append the relay's log to this file instead of standard output.")
    var logFile: String?

    @Option(help: "Relay log level: trace (bodies), debug (frames, ACKs), info (messages, sessions).")
    var logLevel: Logger.Level = .info

    @Option(help: "Relay log format: text or json.")
    var logFormat: RelayConfiguration.LogFormat = .text

    @Option(help: "Also record every relayed session into a capture file (.blipcap) in this directory.")
    var capture: String?

    @Flag(help: "With --capture: keep secret BLIP property values in the capture files as sent (masked by default).")
    var captureSecrets = false

    @Option(help: "Fail if the demo has not finished after this many seconds.")
    var timeout = 60

    func validate() throws {
        if timeout < 1 { throw ValidationError("--timeout must be at least 1 second") }
    }

    func run() async throws {
        let sink = try logFile.map { try LineLogHandler.Sink.appending(to: $0) } ?? .standardOutput()
        // Headings and the summary go in order with the log lines: through the same sink when the
        // log is text on standard output; a JSON log stays pure JSON lines (headings to stderr).
        let toStandardOutput = logFile == nil, text = logFormat == .text
        let narrate: @Sendable (String) -> Void = { line in
            if text { sink.write(line) }
            if !toStandardOutput {
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            } else if !text {
                sink.flush()
                FileHandleOutput.standardError(line)
            }
        }
        let scenario = DemoScenario(seedFile: try OptionCheck.readableFile(docs, option: "--docs", holding: OptionCheck.seedHint), sink: sink, logLevel: logLevel, logFormat: logFormat,
                                    captureDirectory: capture, captureSecrets: captureSecrets, narrate: narrate)
        let progress = DemoProgress()
        do {
            let report = try await Self.withDeadline(seconds: timeout, progress: progress) {
                try await scenario.run(progress: progress)
            }
            for line in summary(report) { narrate(line) }
            sink.flush()
        } catch {
            sink.flush()
            throw error
        }
    }

    private func summary(_ report: DemoScenario.Report) -> [String] {
        let edits = report.edits, push = report.push, relay = report.relay
        let messages = relay.messages[0] + relay.messages[1]
        var lines = [
            "── summary",
            "  pulled     \(report.pull.pulledRevisions) of \(report.seeded) documents, \(report.pull.pulledAttachments) attachments, byte-equal with the gateway",
            "  pushed     \(push.pushedRevisions) revisions (new \(edits.added) with \(DemoEdits.attachmentName), changed \(edits.changed), deleted \(edits.deleted)), \(push.pushedAttachments) attachment",
            "  conflicts  \(push.conflicts.count): " + push.conflicts.map(\.description).joined(separator: "; "),
            "             the gateway kept its revision; a real app would resolve the conflict locally and push again",
            "  relay      \(relay.opened) sessions, \(messages) messages decoded (\(relay.messages[0]) C→U, \(relay.messages[1]) U→C), \(relay.errorReplies) ERR replies",
            "  log        \(logFile.map { "appended to \($0)" } ?? "standard output (above)")",
        ]
        if capture != nil {
            lines.append("  capture    " + (report.captureFiles.isEmpty ? "no files written" : report.captureFiles.joined(separator: ", ")))
            if let first = report.captureFiles.first { lines.append("             read it back with: blipscope inspect \(first)") }
        }
        lines += [
            "",
            "Watch your own app the same way: run the relay in front of your Sync Gateway",
            "  blipscope relay --listen 127.0.0.1:4994 --upstream ws://SG_HOST:4984",
            "and point Couchbase Lite's replicator at ws://127.0.0.1:4994/DB instead of ws://SG_HOST:4984/DB.",
        ]
        return lines
    }

    /// Runs `body`, or fails loudly after `seconds`, naming the step it was stuck at. Unlike a task
    /// group, it does not wait for a stuck body to notice cancellation (NIO futures never do).
    static func withDeadline<T: Sendable>(seconds: Int, progress: DemoProgress,
                                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = FirstOutcome<T>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.install(continuation)
            let work = Task {
                do { outcome.complete(.success(try await body())) } catch { outcome.complete(.failure(error)) }
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(seconds))
                if Task.isCancelled { return }
                outcome.complete(.failure(DemoFailure("it did not finish within \(seconds) s (last step: \(progress.currentStep))")))
                work.cancel()
            }
            outcome.onComplete { timer.cancel() }
        }
    }
}

/// Resumes a continuation with whichever result comes first; later ones are dropped.
private final class FirstOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var completion: (@Sendable () -> Void)?

    func install(_ continuation: CheckedContinuation<T, any Error>) { lock.withLock { self.continuation = continuation } }
    func onComplete(_ action: @escaping @Sendable () -> Void) {
        let done = lock.withLock { () -> Bool in
            if continuation == nil { return true }
            completion = action
            return false
        }
        if done { action() }
    }

    func complete(_ result: Result<T, any Error>) {
        let (continuation, completion) = lock.withLock { () -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            defer { self.continuation = nil; self.completion = nil }
            return (self.continuation, self.completion)
        }
        continuation?.resume(with: result)
        completion?()
    }
}
