import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test, with its standard output and error gathered as they come.
/// Every wait is bounded; a command still running when the test lets go of it is killed.
///
/// Started with `posix_spawn`, not Foundation's `Process`: on this toolchain (Swift 6.3.1 on
/// Linux) `Process.run()` now and then crashes the whole test process while it lists
/// `/proc/self/fd` (swift-corelibs-foundation #5472). The child gets /dev/null as its input, the
/// two pipes as its outputs, and no other descriptor of ours (`closefrom(3)`), and every signal
/// at its default disposition.
public final class RunningCommand: @unchecked Sendable {
    public let executable: String
    public let arguments: [String]
    public let processIdentifier: pid_t
    public let output: CommandOutput
    public let errors: CommandOutput
    private let termination = CommandOutput()
    private let lock = NSLock()
    private var exited = false

    /// Starts `executable` (a path) with `arguments`; `input`, when given, is its standard input.
    public init(executable: String, arguments: [String], input: [UInt8]? = nil) throws {
        self.executable = executable
        self.arguments = arguments
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1], inputPipe: [Int32] = [-1, -1]
        guard pipe(&outputPipe) == 0, pipe(&errorPipe) == 0, input == nil || pipe(&inputPipe) == 0 else {
            throw CommandFailure("pipe failed (errno \(errno))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(outputPipe[1])
        close(errorPipe[1])
        if input != nil { close(inputPipe[0]) }
        guard spawned == 0 else {
            for descriptor in [outputPipe[0], errorPipe[0], inputPipe[1]] where descriptor >= 0 { close(descriptor) }
            throw CommandFailure("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        if let input {
            let descriptor = inputPipe[1]
            Thread.detachNewThread {  // a pipe holds 64 KiB: write on, however much the child reads
                var offset = 0
                while offset < input.count {
                    let written = input.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, input.count - offset) }
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { break }
                    offset += written
                }
                close(descriptor)
            }
        }
        let child = pid
        processIdentifier = child
        output = CommandOutput(reading: outputPipe[0])
        errors = CommandOutput(reading: errorPipe[0])
        let termination = self.termination
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            lock.withLock { exited = true }
            // Exited: its code; killed by a signal: 128 + the signal, as a shell reports it.
            let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + status & 0x7F
            termination.append("\(code)\n".utf8)
        }
    }

    /// Runs `executable` to its end (killed after `seconds`): its status and both outputs.
    public static func run(_ executable: String, _ arguments: [String], input: [UInt8]? = nil,
                           within seconds: Double = 60) async throws -> CommandResult {
        let command = try RunningCommand(executable: executable, arguments: arguments, input: input)
        defer { command.kill() }
        let status = try await command.waitForExit(within: seconds)
        return CommandResult(status: status, output: command.output.text, errors: command.errors.text)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module leaves out.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    deinit { kill() }

    /// Whether the child has not ended (been reaped) yet.
    public var isRunning: Bool { lock.withLock { !exited } }

    /// Sends `signal` to the child if it is still running.
    public func signal(_ signal: Int32) {
        lock.withLock { if !exited { _ = Glibc.kill(processIdentifier, signal) } }
    }

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
        self.signal(signal)
        return try await waitForExit(within: seconds)
    }

    /// Ends the command at once if it is still running (SIGKILL); for `defer`.
    public func kill() { signal(SIGKILL) }

    var summary: String {
        "\(executable) \(arguments.joined(separator: " "))\n--- stdout:\n\(output.text.suffix(4000))\n--- stderr:\n\(errors.text.suffix(4000))"
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

    /// Reads `descriptor` to its end on a thread of its own (blocking reads: a readability
    /// handler can miss the end of a stream that closes right after its last write), then closes it.
    init(reading descriptor: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                append(buffer[0..<count])
            }
            close(descriptor)
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
