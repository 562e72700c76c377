/// Where a session's capture can be downloaded from, when the relay (or the files `blipscope web`
/// opened) has one: the session's `.blipcap` file and a pcap made from it.
public protocol CaptureDownloads: Sendable {
    /// The session's capture file, if one exists (its first part when it was rotated).
    func captureFile(sessionID: UInt64) -> String?
    /// Those of `sessions` that have a capture file now: what the sessions list marks as
    /// downloadable.
    func capturedSessions(among sessions: [UInt64]) -> Set<UInt64>
    /// A pcap of the session, if one can be given (made on request; nil when it cannot).
    func pcapFile(sessionID: UInt64) -> String?
}

extension CaptureDownloads {
    /// The sessions `history` keeps that have a capture file now.
    func capturedSessions(in history: SessionHistory) -> Set<UInt64> {
        capturedSessions(among: history.recordings().map(\.description.id))
    }
}
