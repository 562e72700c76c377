/// The memory bounds of an import. Every buffer the importer grows is capped by one of these.
///
/// When a limit is reached the affected direction of that connection stops with a
/// ``CaptureError`` event; the rest of the capture is still imported.
public struct CaptureLimits: Sendable, Hashable {
    /// Bytes held per direction beyond a hole in the TCP sequence space, waiting for the missing
    /// bytes. Past this the hole is reported as lost (``CaptureError/Code/outOfOrderLimitExceeded``).
    public var maxOutOfOrderBytesPerDirection: Int
    /// Largest reassembled WebSocket message (all fragments together), and so also the largest
    /// single frame. Couchbase Lite accepts 1 MiB and Sync Gateway 32 KiB (wire format §1.1), so
    /// the default leaves ample room for odd peers.
    public var maxWebSocketMessageBytes: Int
    /// Largest HTTP request or response head (start line and headers).
    public var maxHTTPHeadBytes: Int
    /// Largest body of a non-101 response that is recorded.
    public var maxHTTPBodyBytes: Int

    public init(
        maxOutOfOrderBytesPerDirection: Int = 16 << 20,
        maxWebSocketMessageBytes: Int = 16 << 20,
        maxHTTPHeadBytes: Int = 64 << 10,
        maxHTTPBodyBytes: Int = 1 << 20
    ) {
        self.maxOutOfOrderBytesPerDirection = maxOutOfOrderBytesPerDirection
        self.maxWebSocketMessageBytes = maxWebSocketMessageBytes
        self.maxHTTPHeadBytes = maxHTTPHeadBytes
        self.maxHTTPBodyBytes = maxHTTPBodyBytes
    }

    public static let `default` = CaptureLimits()
}
