import BLIPCore
import Foundation
import Replication

/// The log lines Sync Gateway writes for a replication, in its format, for the requests the
/// gateway handles (docs/sync-gateway-behaviour.md, "Its log"): so that what joins a session
/// with Sync Gateway's own log (`inspect --sg-log`) is exercised without one.
///
/// ```
/// 2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[684961ef] db:db col:_default #2: Type:getCheckpoint
/// 2026-12-05T12:14:52.420Z [INF] SyncMsg: c:[684961ef] db:db col:_default #2: Type:getCheckpoint --> 404 missing
/// ```
///
/// `#N` counts the requests handled on the connection, as Sync Gateway's does. Confined to the
/// connection's event loop.
final class SyncGatewayStyleLog {
    let context: String
    let database: String
    private let write: @Sendable (String) -> Void
    private var handled = 0
    private var current = 0

    init(context: String, database: String, write: @escaping @Sendable (String) -> Void) {
        self.context = context
        self.database = database
        self.write = write
    }

    func handled(_ request: BLIPMessage, profile: ReplicationProfile) {
        handled += 1
        current = handled
        write(line("[INF] SyncMsg:", profile: profile, detail: ""))
    }

    func refused(_ request: BLIPMessage, profile: ReplicationProfile, error: GatewayError) {
        write(line("[INF] SyncMsg:", profile: profile, detail: " --> \(error.status) \(error.replyMessage)"))
    }

    private func line(_ level: String, profile: ReplicationProfile, detail: String) -> String {
        "\(Self.timestamp()) \(level) c:[\(context)] db:\(database) col:_default #\(current): Type:\(profile.rawValue)\(detail)"
    }

    /// `2026-12-05T12:14:52.415Z`, as Sync Gateway writes its times.
    static func timestamp(_ date: Date = Date()) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var time = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int(millis % 1000))
    }
}
