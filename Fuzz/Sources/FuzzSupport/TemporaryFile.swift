#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#else
import Darwin
private let systemWrite = Darwin.write
#endif

/// A file of this process, rewritten for each input: readers that take a path (libpcap, the
/// capture reader) get the fuzz input through it. One per process, so parallel fuzzer jobs
/// (`-jobs`, `-workers`) do not share files; removed when the process exits normally (libFuzzer
/// exits after its runs or its time), kept after a crash.
public struct TemporaryFile: Sendable {
    public let path: String

    public init(name: String) {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        path = "\(directory)/blipscope-fuzz-\(getpid())-\(name)"
        TemporaryFiles.removeAtExit(path)
    }

    /// Replaces the file's contents with `bytes`.
    public func write(_ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0, "cannot create \(path)")
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                systemWrite(fd, raw.baseAddress! + written, raw.count - written)
            }
            precondition(result > 0, "cannot write \(path)")
            written += result
        }
    }

    public func remove() { unlink(path) }
}

/// The paths of this process's ``TemporaryFile``s, unlinked by one `atexit` handler.
private enum TemporaryFiles {
    /// Only touched while the fuzz target's globals are set up and at exit: one thread.
    nonisolated(unsafe) static var paths: [String] = []

    static func removeAtExit(_ path: String) {
        if paths.isEmpty { atexit { for path in TemporaryFiles.paths { unlink(path) } } }
        paths.append(path)
    }
}
