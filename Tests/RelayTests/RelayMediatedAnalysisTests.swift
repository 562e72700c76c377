import BLIPCore
import BLIPNIO
import Mediation
import NIOCore
import Replication
import Testing
@testable import Relay

/// What a mediating session's summary says, through real sockets: counts of what each side
/// actually got. A policy keeps `secret-*` revisions from the server; the client pushes six
/// documents, retries the two refused ones once (as LiteCore does after a 403), and closes.
@Suite struct RelayMediatedAnalysisTests {
    /// Answers proposeChanges with "send them all", everything else as the echo peer does.
    static let pushPeer: @Sendable (BLIPMessage, BLIPChannelHandler) -> Void = { request, handler in
        if request.profile == "proposeChanges" {
            handler.sendReply(.reply(to: request, body: body("[]")))
        } else {
            RelayHarness.echo(request, handler)
        }
    }

    @Test("denied revs: the summary counts the revs the server got and the 403s the client got")
    func deniedRevsAreCountedAsDelivered() async throws {
        let harness = try await RelayHarness.start(upstream: { $0.onRequest = Self.pushPeer }, relay: { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    head.type == .request && head.properties["id"]?.hasPrefix("secret-") == true
                        ? .deny(ErrorReply(code: 403, message: "not for the server"), rule: "no-secrets") : .pass
                }
            }
        })
        let client = try await harness.connected()
        let documents = ["d1", "d2", "secret-1", "d3", "secret-2", "d4"]
        let entries = documents.map { #"["\#($0)","1-a"]"# }.joined(separator: ",")
        _ = try await withTimeout {
            try await client.request(.request(profile: "proposeChanges", body: body("[\(entries)]"), compressed: true))
        }
        var refused: [String] = []
        for document in documents + ["secret-1", "secret-2"] {
            let reply = try await withTimeout {
                try await client.request(.request(profile: "rev", properties: ["id": document, "rev": "1-a"], body: body("{}")))
            }
            if reply.type == .error { refused.append(document) }
        }
        #expect(refused == ["secret-1", "secret-2", "secret-1", "secret-2"])
        // The echo peer answers with the request's properties: the checkpoint's new rev is "1-cp".
        _ = try await withTimeout {
            try await client.request(.request(profile: "setCheckpoint", properties: ["client": "cp", "rev": "1-cp"],
                                              body: body(#"{"local":6}"#)))
        }
        try await client.close()
        let closed = try await harness.recorder.sessionClosed()
        let summary = try #require(closed.replication)
        #expect(summary.pushed.revisionsSent == 4 && summary.pushed.documents == 4, "what the server got")
        #expect(summary.pushed.revisionsAccepted == 4 && summary.pushed.revisionsWithheld == 4)
        #expect(summary.errorsByDomainAndCode == ["HTTP 403": 4], "what the client got")
        #expect(summary.pushDone == true, "every rev answered, by the server or the relay, and the checkpoint saved")

        let lines = RelayLoggingTests.lines(harness.recorder.all, format: .text, level: .info)
        let line = try #require(lines.first { $0.contains("event=summary") })
        #expect(line.contains("pushedDocs=4") && line.contains("pushedRevs=4") && line.contains("withheldRevs=4"), "\(line)")
        #expect(line.contains("errors=\"HTTP 403×4\"") || line.contains("errors=HTTP 403×4"), "\(line)")
        #expect(lines.filter { $0.contains("by=relay") && $0.contains("type=ERR") }.count == 4)
        try await harness.shutdown()
    }
}
