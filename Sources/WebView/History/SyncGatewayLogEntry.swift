import SyncGatewayLog

/// One of Sync Gateway's log lines kept with a session: the line and the BLIP number of the
/// client's request it is about (nil for a line about the session: changes sent, errors, the
/// connection's end), as ``SessionLogJoin`` paired them.
public struct SyncGatewayLogEntry: Sendable, Equatable {
    public var line: SyncGatewayLogLine
    public var request: UInt64?

    public init(line: SyncGatewayLogLine, request: UInt64?) {
        self.line = line
        self.request = request
    }
}
