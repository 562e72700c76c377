import NIOCore
import Testing
@testable import MediationRules

/// The `bandwidth` action's link: messages take it one after the other.
@Suite struct BandwidthPipeTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func aLoneMessageWaitsForItsOwnTransfer() {
        var pipe = BandwidthPipe()
        #expect(pipe.hold(bytes: 64_000, bytesPerSecond: 64_000, now: start) == .seconds(1))
    }

    @Test func messagesArrivingTogetherAreSpreadOut() {
        var pipe = BandwidthPipe()
        let holds = (0..<3).map { _ in pipe.hold(bytes: 10_000, bytesPerSecond: 100_000, now: start) }
        #expect(holds == [.milliseconds(100), .milliseconds(200), .milliseconds(300)])
    }

    @Test func anIdleLinkStartsAfresh() {
        var pipe = BandwidthPipe()
        _ = pipe.hold(bytes: 10_000, bytesPerSecond: 100_000, now: start)
        // Half-way through the first transfer, the second waits for the rest of it.
        #expect(pipe.hold(bytes: 10_000, bytesPerSecond: 100_000, now: start + .milliseconds(50)) == .milliseconds(150))
        // Long after both, the link is free again.
        #expect(pipe.hold(bytes: 10_000, bytesPerSecond: 100_000, now: start + .seconds(5)) == .milliseconds(100))
    }
}
