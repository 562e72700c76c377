import BLIPCore

extension SessionState {
    /// The session's counts so far (complete once it has closed).
    func summary() -> ReplicationSummary {
        var pushed = transfer[BLIPDirection.clientToServer.rawValue]
        var pulled = transfer[BLIPDirection.serverToClient.rawValue]
        pushed.revisionsUnconfirmed = unconfirmedRevisions(travelling: .clientToServer)
        pulled.revisionsUnconfirmed = unconfirmedRevisions(travelling: .serverToClient)
        let pushes = pushed.changesMessages > 0 || pushed.revisionsSent > 0 || pushed.revisionsWithheld > 0
        let pulls = subChangesSender == .clientToServer || pulled.changesMessages > 0 || pulled.revisionsSent > 0
        let type = pushes && pulls ? "pushAndPull" : pushes ? "push" : pulls ? "pull" : "none"
        let progress = progress(pushes: pushes, pulls: pulls)
        let end = closes.last?.time ?? lastTime
        return ReplicationSummary(
            connection: connection, subprotocol: subprotocol, user: user, startTime: startTime, endTime: end,
            durationSeconds: startTime.flatMap { start in end.map { $0 - start } },
            replicationType: type, continuous: continuous, collectionMode: collectionMode.rawValue,
            collections: context.collections.map(\.description), versioning: context.versioning?.rawValue,
            messagesFromClient: messageCounts[0], messagesFromServer: messageCounts[1],
            bytesFromClient: byteCounts[0], bytesFromServer: byteCounts[1],
            pushed: pushed, pulled: pulled, conflicts: conflicts,
            checkpointConflicts: checkpoints.values.reduce(0) { $0 + $1.conflicts },
            newCheckpoints: newCheckpoints,
            errorsByDomainAndCode: errorCounts, caughtUp: progress.caughtUpTime != nil,
            pullCaughtUp: progress.pullCaughtUp, pushDone: progress.pushDone,
            secondsToCaughtUp: progress.caughtUpTime.flatMap { caught in startTime.map { caught - $0 } },
            closes: closes, profiles: profileStats.sorted,
            findings: findingTallies(),
            protocolViolations: violations, findingsDropped: findingsDropped,
            timelineDocumentsEvicted: timelines.evictedDocuments)
    }

    /// The findings raised so far and, once closed, the close that cut revisions short, by kind.
    private func findingTallies() -> [FindingTally] {
        var tallies: [Finding.Kind: FindingTally] = [:]
        for finding in findings + [closedMidTransferFinding()].compactMap({ $0 }) {
            tallies[finding.kind, default: FindingTally(kind: finding.kind)].add(finding)
        }
        return Finding.Kind.allCases.compactMap { tallies[$0] }
    }
}
