import BLIPCore
import BLIPNIO
import NIOCore
import Testing
@testable import Relay

/// A silent upstream cannot grow the relay's pairing table without bound: past
/// `maxAwaitedReplies` the oldest requests are given up, and the session's close line says how
/// many replies could not be paired.
@Suite struct RelayUnpairedRepliesTests {
    @Test func aSilentUpstreamsUnansweredRequestsAreBoundedAndCounted() async throws {
        let harness = try await RelayHarness.start(upstream: { $0.onRequest = { _, _ in } },
                                                   relay: { $0.limits.decoder.maxAwaitedReplies = 4 })
        let client = try await harness.connected()
        for index in 0..<10 { _ = try await client.send(.request(profile: "never-answered", body: body("\(index)"))) }
        _ = try await harness.upstream()
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.statistics.unpairedReplies == 6)
        let lines = RelayLoggingTests.lines(harness.recorder.all, format: .text, level: .info)
        #expect(lines.contains { $0.contains("event=close") && $0.contains("unpairedReplies=6") }, "\(lines)")
        try await harness.shutdown()
    }
}
