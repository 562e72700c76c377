import Foundation
import NIOConcurrencyHelpers

/// Couchbase's `cblite` tool (LiteCore 3.1, the engine of Couchbase Lite), run as a real client.
/// Opt-in: `BLIPSCOPE_CBLITE` names the binary; without it these tests are skipped. Built from
/// public source outside this repository.
struct CBLite: Sendable {
    static let path = ProcessInfo.processInfo.environment["BLIPSCOPE_CBLITE"]
    static var available: Bool { path.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    /// LiteCore 4.0's `cblite` (version vectors, CBMobile_4), from `BLIPSCOPE_CBLITE4`.
    static let path4 = ProcessInfo.processInfo.environment["BLIPSCOPE_CBLITE4"]
    static var available4: Bool { path4.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    /// A scratch directory for databases, removed by ``cleanUp()``.
    let directory: URL
    /// The `cblite` binary run.
    let executable: String

    init(executable: String? = CBLite.path) throws {
        self.executable = executable ?? ""
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-cblite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// A database path in the scratch directory, created with its `Attachments/` folder
    /// (LiteCore 3.1's blob store does not make it on demand).
    func database(_ name: String) throws -> String {
        let path = directory.appendingPathComponent("\(name).cblite2").path
        if !FileManager.default.fileExists(atPath: path) {
            let made = try run(["--create", "ls", path])
            guard made.status == 0 else { throw CBLiteFailure(made.output) }
        }
        try FileManager.default.createDirectory(atPath: path + "/Attachments", withIntermediateDirectories: true)
        return path
    }

    /// A database holding `documents` (JSON objects with `_id`), imported with `cblite cp`. Their
    /// keys are written in order: LiteCore's revision ID hashes the body as imported, which
    /// depends on where `_id` stood, so the same documents get the same revisions every time.
    func database(_ name: String, holding documents: [[String: Any]]) throws -> String {
        let json = directory.appendingPathComponent("\(name).json")
        let lines = try documents.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys), as: UTF8.self) }
        try (lines.joined(separator: "\n") + "\n").write(to: json, atomically: true, encoding: .utf8)
        let path = directory.appendingPathComponent("\(name).cblite2").path
        let copied = try run(["cp", json.path, path])
        guard copied.status == 0 else { throw CBLiteFailure(copied.output) }
        try FileManager.default.createDirectory(atPath: path + "/Attachments", withIntermediateDirectories: true)
        return path
    }

    /// The document IDs of a database (deleted ones are not listed).
    func documentIDs(_ database: String) throws -> [String] {
        let listed = try run(["ls", database])
        return listed.output.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init).sorted()
    }

    /// The live documents of a database by ID: each one's revision and flags as `ls -l` shows
    /// them (`2-b821ac31 -c-`, or a version `18ee641c43f50000@*` in a version-vector database;
    /// flags `c` conflicted, `a` has attachments).
    func revisions(_ database: String) throws -> [String: String] {
        let listed = try run(["ls", "-l", database])
        var revisions: [String: String] = [:]
        for line in listed.output.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, fields[1].contains("-") || fields[1].contains("@"), fields[2].count == 3 else { continue }
            revisions[String(fields[0])] = "\(fields[1]) \(fields[2])"
        }
        return revisions
    }

    /// Purges documents from a database: deleted (`rm`), then every deleted document purged
    /// (`compact --purgeDeleted`, cblite's only purge), so no tombstone is left to replicate.
    func purge(_ ids: [String], from database: String) throws {
        for id in ids {
            let removed = try run(["rm", database, id])
            guard removed.status == 0 else { throw CBLiteFailure(removed.output) }
        }
        let compacted = try run(["compact", "--purgeDeleted", database])
        guard compacted.status == 0 else { throw CBLiteFailure(compacted.output) }
    }

    /// Writes a blob into a database's blob store (as LiteCore names it: the SHA-1 digest in
    /// base64, `/` as `_`, `.blob`) and returns the blob's metadata for a document's body.
    func writeBlob(_ data: Data, into database: String, digest: String, contentType: String) throws -> [String: Any] {
        let name = digest.dropFirst("sha1-".count).replacingOccurrences(of: "/", with: "_") + ".blob"
        try data.write(to: URL(fileURLWithPath: database + "/Attachments/" + name))
        return ["@type": "blob", "digest": digest, "length": data.count, "content_type": contentType]
    }

    /// Returns once `database` holds `count` documents (asked every 100 ms, for at most
    /// `seconds`): the revs of a pull from Sync Gateway or the embedded gateway are NoReply, so
    /// nothing on the wire says when LiteCore stored them; its database does.
    func waitForDocuments(_ database: String, count: Int, seconds: Double = 60) async throws {
        for _ in 0..<Int(seconds * 10) {
            if (try? documentIDs(database).count) == count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CBLiteFailure("\(database) did not reach \(count) documents within \(seconds) s")
    }

    /// Files in a database's blob store.
    func blobCount(_ database: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: database + "/Attachments"))?.count ?? 0
    }

    struct Result: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs `cblite` with `arguments`, waiting at most `seconds` (then it is killed and the result
    /// says so with status -9).
    func run(_ arguments: [String], seconds: Double = 120) throws -> Result {
        let process = try start(arguments)
        return try process.finish(within: seconds)
    }

    /// ``run(_:seconds:)`` waiting on a Dispatch thread, not on one of Swift's few cooperative
    /// threads: for runs whose other end (a replay) is driven by Swift tasks, which a blocked
    /// cooperative pool would starve until the timeout.
    func runOffThePool(_ arguments: [String], seconds: Double = 120) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try run(arguments, seconds: seconds) })
            }
        }
    }

    func start(_ arguments: [String], input: String? = nil) throws -> Running {
        try Running(executable: executable, arguments: arguments, input: input)
    }

    /// The tool's interactive shell, its standard input kept open for ``Running/send(_:)``
    /// (e.g. `openremote --continuous`, whose replicator sees the shell's `put`s).
    func shell(_ arguments: [String]) throws -> Running {
        try Running(executable: executable, arguments: arguments, input: nil, interactive: true)
    }

    /// A `cblite` process under way (e.g. a continuous pull).
    final class Running: @unchecked Sendable {
        let process = Process()
        private let pipe = Pipe()
        private let collected = NIOLockedValueBox(Data())
        private let done = DispatchSemaphore(value: 0)
        /// Signalled once everything the tool wrote has been read (end of file on its output).
        private let drained = DispatchSemaphore(value: 0)

        /// Standard input, while the shell is `interactive`.
        private let shellInput: FileHandle?

        /// `input`, when given, is written to the tool's standard input (its interactive shell);
        /// `interactive` keeps that input open for ``send(_:)``.
        init(executable: String, arguments: [String], input: String? = nil, interactive: Bool = false) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = pipe
            process.standardError = pipe
            let stdin = Pipe()
            process.standardInput = input == nil && !interactive ? FileHandle.nullDevice : stdin
            shellInput = interactive ? stdin.fileHandleForWriting : nil
            // Read on a thread of its own to the end of the output, so that a finished run's
            // output is whole (a readability handler could still be appending after the end).
            let collected = collected
            let reading = pipe.fileHandleForReading
            DispatchQueue.global().async { [drained] in
                while case let data = reading.availableData, !data.isEmpty {
                    collected.withLockedValue { $0.append(data) }
                }
                drained.signal()
            }
            process.terminationHandler = { [done] _ in done.signal() }
            try process.run()
            if let input {
                let handle = stdin.fileHandleForWriting
                DispatchQueue.global().async {
                    handle.write(Data(input.utf8))
                    try? handle.close()
                }
            }
        }

        var output: String { String(decoding: collected.withLockedValue { $0 }, as: UTF8.self) }

        /// Writes `line` to the interactive shell.
        func send(_ line: String) {
            shellInput?.write(Data((line + "\n").utf8))
        }

        /// Waits for the end, at most `seconds`; kills the process past that.
        func finish(within seconds: Double) throws -> Result {
            if done.wait(timeout: .now() + seconds) == .timedOut {
                process.terminate()
                _ = done.wait(timeout: .now() + 10)
                _ = drained.wait(timeout: .now() + 10)
                return Result(status: -9, output: output + "\n[killed after \(seconds) s]")
            }
            _ = drained.wait(timeout: .now() + 10)
            return Result(status: process.terminationStatus, output: output)
        }

        /// Stops it and waits for the end.
        func stop() throws -> Result {
            // SIGKILL: the test runner spawns children with SIGTERM and SIGINT blocked; committed
            // documents survive (SQLite WAL).
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return try finish(within: 30)
        }
    }
}

struct CBLiteFailure: Error, CustomStringConvertible {
    let description: String
    init(_ output: String) { description = "cblite failed: \(output)" }
}

/// Documents of mixed sizes, as a user's: small ones, some of a few KB, and every
/// `largeEvery`-th over 200 KB, so its messages span many frames.
func mixedDocuments(_ count: Int, prefix: String = "doc", largeEvery: Int = 100) -> [[String: Any]] {
    (0..<count).map { index in
        var document: [String: Any] = ["_id": String(format: "\(prefix)-%04d", index), "n": index,
                                       "text": String(repeating: "lorem ipsum ", count: [1, 10, 100, 400][index % 4])]
        if index % largeEvery == 0 { document["big"] = String(repeating: "abcdefghij", count: 21_000) }
        return document
    }
}
