/// Where a session's capture can be downloaded from, when the relay (or the files `blipscope web`
/// opened) has one: the session's `.blipcap` file and a pcap made from it.
public protocol CaptureDownloads: Sendable {
    /// The session's capture file, if one exists (its first part when it was rotated).
    func captureFile(sessionID: UInt64) -> String?
    /// The sessions that have a capture file now: what the sessions list marks as downloadable
    /// (one listing of the capture directory for the whole list).
    func capturedSessions() -> Set<UInt64>
    /// A pcap of the session, if one can be given (made on request; nil when it cannot).
    func pcapFile(sessionID: UInt64) -> String?
}
