import BLIPCore
import BLIPNIO
import Mediation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// The relay ACKs a re-encoded direction's sender itself, so a sender whose messages are delayed
/// never stalls on its own: ``MediationLimits/maxDelayedBytes`` is what stops the relay from
/// holding without limit, by pausing reads from that sender until timers release enough.
@Suite struct RelayDelayBudgetTests {
    @Test("a client sending many delayed messages is paused at the delay budget, and every message still arrives in order")
    func delayedMessagesPauseTheSender() async throws {
        let budget = 64 * 1024
        let count = 64
        let seen = NIOLockedValueBox<[String]>([])
        let harness = try await Self.relay(budget: budget, delayingSlowBy: .milliseconds(300), seen: seen)
        let client = try await harness.connected()
        // 64 × 16 KiB is 1 MiB, all queued in one turn of the client's loop: far more than the
        // budget, and on the wire as fast as the socket takes it, however busy the machine is.
        let payload = String(repeating: "d", count: 16 * 1024)
        let pending = try await client.onLoop { handler in
            (1...count).map { seq in
                handler.sendRequest(.request(profile: "slow", properties: ["seq": String(seq)], body: body(payload)))
            }
        }

        // The relay stopped reading from the client while it held the budget's worth…
        _ = try await harness.recorder.first {
            if case .flowControl(_, .clientToServer, true) = $0 { true } else { false }
        }
        // …and every message still reached the upstream after its delay, in the order sent.
        let replies = try await replies(to: pending)
        #expect(replies.map { $0.properties["seq"] } == (1...count).map(String.init))
        #expect(replies.allSatisfy { $0.body.readableBytes == payload.utf8.count })
        #expect(seen.withLockedValue { $0 } == (1...count).map(String.init))

        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        #expect(summary.statistics.flowPauses[BLIPDirection.clientToServer.rawValue] >= 1)
        // What it held at once stayed within the budget plus what one read batch brings in after
        // it was reached (NIO's 4 socket reads of at most 64 KiB) and the rest of a frame;
        // unbounded, it would have held all 1 MiB.
        let peak = summary.statistics.maxDelayedBytes[BLIPDirection.clientToServer.rawValue]
        #expect(peak > budget)
        #expect(peak <= budget + 4 * 64 * 1024 + 16 * 1024)
        try await harness.shutdown()
    }

    @Test("a flood of passing requests queued behind one delayed request pauses the sender too, and all arrive in order")
    func requestsQueuedBehindADelayedOnePauseTheSender() async throws {
        let budget = 64 * 1024
        let count = 64
        let seen = NIOLockedValueBox<[String]>([])
        let harness = try await Self.relay(budget: budget, delayingSlowBy: .seconds(2), seen: seen)
        let client = try await harness.connected()
        // One small delayed request, then 1 MiB of requests no rule touches, all queued in one
        // turn of the client's loop: they may not overtake it, so they wait in the relay behind
        // it. The delay leaves a loaded machine ample time to bring in the budget's worth.
        let payload = String(repeating: "f", count: 16 * 1024)
        let pending = try await client.onLoop { handler in
            [handler.sendRequest(.request(profile: "slow", properties: ["seq": "0"], body: body("first")))]
                + (1...count).map { seq in
                    handler.sendRequest(.request(profile: "fast", properties: ["seq": String(seq)], body: body(payload)))
                }
        }
        _ = try await harness.recorder.first {
            if case .flowControl(_, .clientToServer, true) = $0 { true } else { false }
        }
        let replies = try await replies(to: pending)
        #expect(replies.map { $0.properties["seq"] } == (0...count).map(String.init))
        #expect(seen.withLockedValue { $0 } == (0...count).map(String.init))

        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        let peak = summary.statistics.maxDelayedBytes[BLIPDirection.clientToServer.rawValue]
        #expect(peak > budget)
        #expect(peak <= budget + 4 * 64 * 1024 + 16 * 1024)
        try await harness.shutdown()
    }

    /// An echo upstream that notes each request's `seq` as it arrives, behind a relay that delays
    /// requests of profile `slow` and holds at most `budget` bytes for timers per direction.
    static func relay(budget: Int, delayingSlowBy delay: TimeAmount,
                      seen: NIOLockedValueBox<[String]>) async throws -> RelayHarness {
        try await RelayHarness.start(upstream: { configuration in
            configuration.onRequest = { request, handler in
                seen.withLockedValue { $0.append(request.properties["seq"] ?? "") }
                RelayHarness.echo(request, handler)
            }
        }, relay: { configuration in
            configuration.mediationLimits.maxDelayedBytes = budget
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    head.type == .request && head.profile == "slow" ? .delay(delay, rule: "slow-down") : .pass
                }
            }
        })
    }
}
