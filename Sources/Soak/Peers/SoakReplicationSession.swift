import Gateway
import Logging
import NIOCore

/// One replication session through the relay: a one-shot pull of the embedded gateway's whole
/// database into an empty local one (subChanges, changes, rev, checkpoints: the real profiles).
/// Revisions it should have pulled and did not count as lost.
struct SoakReplicationSession: Sendable {
    let url: String
    let expectedRevisions: Int
    let timeout: Duration

    func run(group: EventLoopGroup) async -> SessionTally {
        var tally = SessionTally()
        tally.replicationSessions = 1
        tally.expectedRevisions = expectedRevisions
        var configuration = ReplicatorConfiguration(url: url, direction: .pull)
        configuration.logger = Logger(label: "blipscope.soak.replicator") { _ in SwiftLogNoOpLogHandler() }
        let replicator = Replicator(configuration: configuration, database: GatewayDatabase(name: "local"), group: group)
        let timeout = self.timeout
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            replicator.stop()
        }
        defer { watchdog.cancel() }
        do {
            let result = try await replicator.run()
            tally.pulledRevisions = result.pulledRevisions
            if !result.documentErrors.isEmpty || !result.conflicts.isEmpty { tally.corrupted += result.documentErrors.count + result.conflicts.count }
        } catch {
            tally.failedSessions = 1
        }
        tally.lost = max(0, expectedRevisions - tally.pulledRevisions)
        return tally
    }
}
