import ServiceLifecycle
import SyncGatewayLog
import WebView

/// `relay --sg-log`: follows Sync Gateway's log files (``SyncGatewayLogTail``) and hands each
/// replication's lines to its session in the web view's history, until graceful shutdown.
/// Looks for new lines every ``interval`` (as `tail -F` polls), so a line shows about that long
/// after SG wrote it.
struct SyncGatewayLogFollower: Service {
    let paths: [String]
    let history: SessionHistory
    var interval: Duration = .milliseconds(250)

    func run() async throws {
        let tails = paths.map { SyncGatewayLogTail(path: $0) }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            for tail in tails {
                // Most lines of a busy gateway belong to other replications: a cheap test first.
                let lines = tail.read().compactMap { $0.contains("c:[") ? SyncGatewayLogLine(Substring($0)) : nil }
                if !lines.isEmpty { history.addSyncGatewayLines(lines) }
            }
            try? await Task.sleep(for: interval)
        }
    }
}
