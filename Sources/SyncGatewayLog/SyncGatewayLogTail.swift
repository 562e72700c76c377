import Foundation

/// Follows a log file Sync Gateway is writing, as `tail -F` does: from its end when it is there
/// already (what SG wrote before is not this run's), from its start when it appears later; then each ``read()`` returns the whole lines written since. A file replaced (SG
/// rotated it: another inode) or cut shorter is read again from its start; a file not there yet
/// is waited for. At most ``SyncGatewayLogLimits/maxTailBytesPerRead`` are read per call, the
/// rest on the next.
public final class SyncGatewayLogTail {
    public let path: String
    private let limits: SyncGatewayLogLimits
    private var handle: FileHandle?
    private var inode: UInt64 = 0
    private var offset: UInt64 = 0
    private var splitter: LogLineSplitter
    /// Where the file's first opening reads from: its size when the tail was made, nil once opened.
    private var firstOffset: UInt64?

    public init(path: String, limits: SyncGatewayLogLimits = SyncGatewayLogLimits()) {
        self.path = path
        self.limits = limits
        self.splitter = LogLineSplitter(maxLineBytes: limits.maxLineBytes)
        var status = stat()
        firstOffset = stat(path, &status) == 0 ? UInt64(status.st_size) : 0
    }

    deinit { try? handle?.close() }

    /// The lines written since the last call.
    public func read() -> [String] {
        var status = stat()
        guard stat(path, &status) == 0 else { return [] }  // not there (yet, or between rotations)
        let currentInode = UInt64(status.st_ino)
        let size = UInt64(status.st_size)
        if handle == nil || currentInode != inode || size < offset {
            try? handle?.close()
            guard let reopened = FileHandle(forReadingAtPath: path) else { return [] }
            handle = reopened
            // A replaced or cut file is read from its start.
            offset = min(firstOffset ?? 0, size)
            firstOffset = nil
            inode = currentInode
            splitter.reset()
        }
        guard let handle, size > offset else { return [] }
        do {
            try handle.seek(toOffset: offset)
            let data = try handle.read(upToCount: Int(min(size - offset, UInt64(limits.maxTailBytesPerRead)))) ?? Data()
            offset += UInt64(data.count)
            return splitter.lines(data)
        } catch {
            return []
        }
    }
}
