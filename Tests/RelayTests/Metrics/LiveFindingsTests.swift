import BLIPCore
import BLIPNIO
import Foundation
import Logging
import NIOCore
import Replication
import Testing
@testable import Relay

/// A setCheckpoint 409 loop through a real relay: the finding is logged once when first made,
/// holds the stuck gauge while it goes on (no poll needed), leaves it when a save succeeds or
/// the session ends, and the session's summary line gives its running count.
@Suite struct LiveFindingsTests {
    static let gauge = #"blipscope_stuck_sessions{reason="checkpointConflictLoop"}"#

    /// Sends setCheckpoint `number` (409 from the upstream when `conflict`) and waits until the
    /// relay has read its reply: the metrics observer sees a message before the recorder does.
    static func setCheckpoint(_ number: MessageNumber, conflict: Bool, client: BLIPConnection,
                              fixture: MetricsFixture) async throws {
        var properties: Properties = ["client": "cp-loop", "rev": ""]
        if conflict { properties["Conflict"] = "1" }
        let request = BLIPMessage.request(profile: "setCheckpoint", properties: properties, body: body(#"{"local":1}"#))
        _ = try await withTimeout { try await client.request(request) }
        _ = try await fixture.harness.recorder.first { event in
            guard case .message(let message) = event else { return false }
            return message.direction == .serverToClient && message.message.number == number
        }
    }

    @Test func aCheckpointLoopIsLoggedOnceCountedLiveAndReleased() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await Self.setCheckpoint(1, conflict: true, client: client, fixture: fixture)
        try await Self.setCheckpoint(2, conflict: true, client: client, fixture: fixture)
        #expect(MetricsFixture.value(Self.gauge, in: try await fixture.get("/metrics").body) == 0)
        try await Self.setCheckpoint(3, conflict: true, client: client, fixture: fixture)
        #expect(MetricsFixture.value(Self.gauge, in: try await fixture.get("/metrics").body) == 1, "the third 409 makes the loop")

        // A save that succeeds ends it; the next 409s do not make a new finding.
        try await Self.setCheckpoint(4, conflict: false, client: client, fixture: fixture)
        #expect(MetricsFixture.value(Self.gauge, in: try await fixture.get("/metrics").body) == 0)
        for number in MessageNumber(5)...7 {
            try await Self.setCheckpoint(number, conflict: true, client: client, fixture: fixture)
        }
        #expect(MetricsFixture.value(Self.gauge, in: try await fixture.get("/metrics").body) == 1)
        let id = try #require(fixture.observer.liveTracks().first?.info.id)
        let detail = try await fixture.get("/sessions/\(id)").body
        let object = try #require(JSONSerialization.jsonObject(with: Data(detail.utf8)) as? [String: Any])
        let listed = try #require((object["session"] as? [String: Any])?["findings"] as? [[String: Any]])
        #expect(listed.count == 1, "listed once: \(listed)")
        #expect(listed.first?["kind"] as? String == "checkpointConflictLoop" && listed.first?["count"] as? Int == 3)

        try await client.close()
        let closed = try await fixture.harness.recorder.sessionClosed()
        #expect(MetricsFixture.value(Self.gauge, in: try await fixture.get("/metrics").body) == 0, "a closed session leaves the gauge")
        #expect(closed.replication?.findings == [FindingTally(kind: .checkpointConflictLoop, findings: 1, occurrences: 3)])

        let lines = RelayLoggingTests.lines(fixture.harness.recorder.all, format: .text, level: .info)
        let findings = lines.filter { $0.contains("event=finding") }
        #expect(findings.count == 1)
        #expect(findings.first?.contains(#"rev \"\" is stale"#) == true, "\(findings)")
        let summary = try #require(lines.first { $0.contains("event=summary") })
        #expect(summary.contains("findings=checkpointConflictLoop×3"), "\(summary)")
        try await fixture.shutdown()
    }
}
