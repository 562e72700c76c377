import BLIPCore
import BLIPNIO
import Mediation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// The mediator's pass-through fast path through real sockets: requests forwarded untouched are
/// still answered correctly when their replies come back after the relay's first intervention has
/// switched both directions to re-encoding (wire-format §2.4, §4.4).
@Suite struct RelayPassThroughTests {
    @Test("requests forwarded before a deny get their replies after it, mapped back and profiled")
    func repliesInFlightAcrossFirstIntervention() async throws {
        let held = NIOLockedValueBox<[BLIPMessage]>([])
        let upstreamNumbers = NIOLockedValueBox<[MessageNumber]>([])
        let replyHeads = NIOLockedValueBox<[(number: MessageNumber, profile: String?)]>([])
        let harness = try await RelayHarness.start(upstream: { configuration in
            configuration.onRequest = { request, handler in
                upstreamNumbers.withLockedValue { $0.append(request.number) }
                guard request.properties["seq"] == "5" else {
                    held.withLockedValue { $0.append(request) }  // answered once #5 is here
                    return
                }
                for early in held.withLockedValue({ $0 }).reversed() {
                    handler.sendReply(.reply(to: early, properties: early.properties, body: early.body))
                }
                RelayHarness.echo(request, handler)
            }
        }, relay: { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    if head.type.isReply { replyHeads.withLockedValue { $0.append((head.number, head.requestProfile)) } }
                    return head.type == .request && head.properties["seq"] == "4"
                        ? .deny(ErrorReply(code: 403, message: "not now"), rule: "no-four") : .pass
                }
            }
        })
        let client = try await harness.connected()
        var pending: [EventLoopFuture<BLIPMessage>] = []
        for seq in 1...3 {
            pending.append(try await client.send(.request(profile: "early-\(seq)", properties: ["seq": String(seq)],
                                                          body: body("early \(seq)"), compressed: seq == 2)))
        }
        let denied = try await withTimeout {
            try await client.request(.request(profile: "denied", properties: ["seq": "4"], body: body("no")))
        }
        #expect(denied.type == .error && denied.properties["Error-Code"] == "403")
        pending.append(try await client.send(.request(profile: "late", properties: ["seq": "5"], body: body("late"))))
        let replies = try await replies(to: pending)
        #expect(replies.map { $0.properties["seq"] } == ["1", "2", "3", "5"])
        #expect(replies.map { String(buffer: $0.body) } == ["early 1", "early 2", "early 3", "late"])
        #expect(upstreamNumbers.withLockedValue { $0 } == [1, 2, 3, 4])
        let profiles = Dictionary(uniqueKeysWithValues: replyHeads.withLockedValue { $0 }.map { ($0.number, $0.profile) })
        #expect(profiles == [1: "early-1", 2: "early-2", 3: "early-3", 5: "late"])

        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        try await harness.shutdown()
    }
}
