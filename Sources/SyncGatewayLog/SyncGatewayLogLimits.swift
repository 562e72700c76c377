/// Bounds on what is kept of Sync Gateway's logs when they are joined with sessions.
public struct SyncGatewayLogLimits: Sendable, Equatable {
    /// Lines kept per replication (correlation ID); later ones are counted, not kept.
    public var maxLinesPerSession = 100_000
    /// Longest line kept whole; longer ones are cut there (a document body logged at trace level).
    public var maxLineBytes = 16 * 1024
    /// Largest file read (after decompressing a `.gz`): Sync Gateway rotates its files at 100 MB
    /// by default, so a rotated one fits with room.
    public var maxFileBytes = 1024 * 1024 * 1024

    /// Most bytes a followed log (``SyncGatewayLogTail``) is read per call; a busy gateway's
    /// backlog is read over several calls.
    public var maxTailBytesPerRead = 4 * 1024 * 1024

    public init() {}
}
