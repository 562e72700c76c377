#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor with the few blocking calls capture files need: whole writes that retry on
/// `EINTR` and partial writes, and reads. Not thread-safe; the owner serialises access.
struct PosixFile {
    let descriptor: Int32
    let path: String

    /// Creates `path` for writing; fails if it already exists (a capture is never overwritten).
    /// Mode 0600: captures hold the traffic, even with secrets redacted.
    static func create(_ path: String) throws -> PosixFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CaptureError.captureFileOpenFailed(path: path, reason: Self.lastError())
        }
        return PosixFile(descriptor: descriptor, path: path)
    }

    static func openForReading(_ path: String) throws -> PosixFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CaptureError.captureFileOpenFailed(path: path, reason: Self.lastError())
        }
        return PosixFile(descriptor: descriptor, path: path)
    }

    /// Writes all of `bytes`.
    func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw CaptureError.captureFileWriteFailed(path: path, reason: Self.lastError())
            }
            offset += written
        }
    }

    /// Reads up to `count` bytes into `into`, appending; returns how many (0 at end of file).
    /// Reads through a scratch buffer and appends only what arrived: no filling and truncating
    /// `count` bytes of `buffer` per read.
    func read(into buffer: inout [UInt8], count: Int) throws -> Int {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(count, 1)) { scratch in
            while true {
                let got = systemRead(descriptor, scratch.baseAddress!, count)
                if got < 0 {
                    if errno == EINTR { continue }
                    throw CaptureError.captureFileReadFailed(path: path, reason: Self.lastError())
                }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<got]))
                return got
            }
        }
    }

    /// Forces written data to the disk (only needed against power loss, not against a crash).
    func sync() throws {
        guard fsync(descriptor) == 0 else {
            throw CaptureError.captureFileWriteFailed(path: path, reason: Self.lastError())
        }
    }

    func close() { systemClose(descriptor) }

    static func lastError() -> String { String(cString: strerror(errno)) }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) { _ = close(descriptor) }

/// Opens a file for a short look at its first bytes.
struct FileDescriptorReader {
    private let file: PosixFile

    init?(path: String) {
        guard let file = try? PosixFile.openForReading(path) else { return nil }
        self.file = file
    }

    func read(upTo count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count, let got = try? file.read(into: &bytes, count: count - bytes.count), got > 0 {}
        return bytes
    }

    func close() { file.close() }
}
