import BLIPCore
import Capture
import Foundation
import Testing
import WebView
@testable import Relay

/// `RelayConfiguration.decodes` off (`relay --no-decode`) through real sockets: small and large
/// echoes, compressed and not, pass; nothing is decoded; the web view's history counts the bytes;
/// the capture holds every frame, and decodes afterwards to what was sent.
@Suite struct RelayNoDecodeTests {
    @Test func echoesPassUndecodedCountedAndCapturedWhole() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = SessionHistory(limits: .default)
        let harness = try await RelayHarness.start(relay: {
            $0.decodes = false
            $0.captureDirectory = directory
        }, observers: [HistoryObserver(history: history)])
        let client = try await harness.connected()
        let sent = try await RelayCaptureTests.traffic(client)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        #expect(summary.statistics.messagesDecoded == [0, 0] && summary.statistics.decodeErrors == [0, 0])
        #expect(summary.replication == nil, "nothing analysed")
        #expect(!harness.recorder.all.contains { if case .message = $0 { true } else { false } })
        // The history: no message row, the forwarded payloads' bytes each way.
        let recording = try #require(history.recordings().first)
        let snapshot = recording.snapshot()
        #expect(snapshot.messages == [0, 0] && snapshot.total == 0)
        let forwarded = harness.recorder.all.reduce(into: [0, 0]) { sums, event in
            if case .forwarded(_, let direction, _, let bytes) = event { sums[direction.rawValue] += bytes }
        }
        #expect(snapshot.bytes == forwarded, "\(snapshot.bytes) \(forwarded)")
        #expect(forwarded[0] > 640_000 && forwarded[1] > 640_000, "the 640 kB body each way, and more")
        // The capture: every frame, decoded later to the requests sent.
        let records = try RelayCaptureTests.files(in: directory).flatMap { try RelayCaptureTests.records($0) }
        var frames = [0, 0]
        for case .frame(let frame) in records { frames[frame.direction.rawValue] += 1 }
        #expect(frames == summary.statistics.framesForwarded)
        #expect(try RelayCaptureTests.decodedRequests(records)[.clientToServer] == sent)
    }
}
