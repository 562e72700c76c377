import ArgumentParser
import BLIPCore
import Capture
import Foundation
import Replication
import SyncGatewayLog

extension InspectCommand {
    func printTimeline(_ events: [TimelineEvent], doc: String, connection: Int) {
        if json {
            for event in events { print(ReplicationJSON.encode(event)) }
            return
        }
        print("# connection \(connection): timeline of \(doc), \(events.count) events")
        for event in events {
            let arrow = event.from == .clientToServer ? "C→S" : "S→C"
            var line = "\(InspectRecord.clock(event.time)) \(arrow) \(event.type)#\(event.number) \(event.profile) \(event.kind.rawValue)"
            if let revID = event.revID { line += " \(revID)" }
            if event.deleted { line += " (deleted)" }
            if let bytes = event.bytes { line += " \(bytes) B" }
            if let history = event.historyCount { line += " hist \(history)" }
            if let attachments = event.attachmentCount, attachments > 0 { line += " \(attachments) attachment(s)" }
            if let note = event.note { line += " — \(note)" }
            if let latency = event.latency { line += String(format: " (%.1f ms)", latency * 1000) }
            print(line)
        }
    }

    func printSummary(_ summary: ReplicationSummary) {
        if json {
            print(ReplicationJSON.encode(summary))
            return
        }
        print("# connection \(summary.connection): \(summary.replicationType)"
              + (summary.continuous.map { $0 ? ", continuous" : ", one-shot" } ?? "")
              + ", \(summary.subprotocol ?? "no sub-protocol"), \(summary.collectionMode)")
        print("  messages: \(summary.messagesFromClient) from client, \(summary.messagesFromServer) from server; "
              + "bytes: \(summary.bytesFromClient) / \(summary.bytesFromServer)")
        print("  pushed: \(describe(summary.pushed))")
        print("  pulled: \(describe(summary.pulled))")
        var progress: [String] = []
        if let pushDone = summary.pushDone { progress.append("push \(pushDone ? "done" : "not done")") }
        if let pullCaughtUp = summary.pullCaughtUp { progress.append("pull \(pullCaughtUp ? "caught up" : "not caught up")") }
        print("  conflicts: \(summary.conflicts), checkpoint conflicts: \(summary.checkpointConflicts), "
              + "caught up: \(summary.caughtUp)" + (summary.secondsToCaughtUp.map { String(format: " after %.3f s", $0) } ?? "")
              + (progress.isEmpty ? "" : " (\(progress.joined(separator: ", ")))"))
        if summary.newCheckpoints > 0 {
            print("  new checkpoints: \(summary.newCheckpoints) (getCheckpoint 404: the client had none yet)")
        }
        if !summary.errorsByDomainAndCode.isEmpty {
            print("  errors: " + summary.errorsByDomainAndCode.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
        }
        if !summary.findings.isEmpty {
            print("  findings: " + summary.findings.map(\.text).joined(separator: ", "))
        }
        for profile in summary.profiles {
            var line = "  \(profile.profile): \(profile.requests) requests, \(profile.replies) replies, \(profile.errors) errors"
            if profile.noReply > 0 { line += ", \(profile.noReply) no-reply" }
            if let average = profile.latencyAverage, let maximum = profile.latencyMax {
                line += String(format: ", latency avg %.2f ms max %.2f ms", average * 1000, maximum * 1000)
            }
            print(line)
        }
        for close in summary.closes { print("  \(close.summary)") }
    }

    func describe(_ counts: TransferCounts) -> String {
        let proposed = counts.revisionsProposed > 0 ? " (\(counts.revisionsProposed) proposed)" : ""
        let withheld = counts.revisionsWithheld > 0 ? ", \(counts.revisionsWithheld) withheld by the relay" : ""
        let revoked = counts.revisionsRevoked > 0 ? " (\(counts.revisionsRevoked) revoked or removed)" : ""
        return "\(counts.documents)\(counts.documentsCountIsLowerBound ? "+" : "") docs, \(counts.revisionsOffered) revs offered\(proposed)\(revoked), "
            + "\(counts.revisionsWanted) wanted, \(counts.revisionsSent) sent (\(counts.revisionBytes) B), "
            + "\(counts.revisionsAccepted) accepted, \(counts.revisionsRefused) refused\(withheld), \(counts.norevs) norev, "
            + "\(counts.revisionsStored) stored (\(counts.revisionsKept) NoReply kept, \(counts.revisionsUnconfirmed) unconfirmed, "
            + "\(counts.revisionsNotStored) not stored), "
            + "\(counts.tombstones) tombstones, \(counts.attachmentsSent) attachments (\(counts.attachmentBytes) B)"
    }

    func printFindings(_ findings: [Finding], connection: Int) {
        if json {
            for finding in findings { print(ReplicationJSON.encode(finding)) }
            return
        }
        print("# connection \(connection): \(findings.count) findings")
        for finding in findings { print("  \(finding)") }
    }
}
