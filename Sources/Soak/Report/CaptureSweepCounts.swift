/// What the soak did with the relay's capture files: it removes each once the relay has stopped
/// writing it, so a long run's capture takes a bounded amount of disk, and reads some back first.
public struct CaptureSweepCounts: Sendable, Equatable, Codable {
    public var filesRemoved = 0
    public var bytesRemoved: Int64 = 0
    /// The most bytes of capture on disk at any sweep.
    public var peakDiskBytes: Int64 = 0
    /// Files read back record by record before removal, and their records.
    public var filesReadBack = 0
    public var recordsReadBack = 0
    /// Bytes the reader had to skip past damaged records (must stay 0), and files it could not
    /// open or that ended in a corrupt record.
    public var damagedBytes = 0
    public var unreadableFiles = 0

    public init() {}
}
