import NIOCore
import Testing
@testable import Relay

/// The relay's idle timeout as the timer sees it: four quiet quarter-periods make a session idle.
@Suite struct IdleWatchTests {
    /// The answers of `count` checks in a row.
    static func checks(_ count: Int, on watch: inout IdleWatch) -> [Bool] {
        (0..<count).map { _ in watch.check() }
    }

    @Test func theTimerLooksFourTimesPerTimeout() {
        #expect(IdleWatch(timeout: .seconds(900)).checkInterval == .seconds(225))
        #expect(IdleWatch(timeout: .milliseconds(300)).checkInterval == .milliseconds(75))
        #expect(IdleWatch(timeout: .nanoseconds(1)).checkInterval == .nanoseconds(1))
    }

    @Test func aSilentSessionIsIdleOnTheFourthQuietCheck() {
        var watch = IdleWatch(timeout: .seconds(4))
        #expect(Self.checks(4, on: &watch) == [false, false, false, true])
    }

    @Test func trafficStartsTheCountAgain() {
        var watch = IdleWatch(timeout: .seconds(4))
        #expect(Self.checks(3, on: &watch) == [false, false, false])
        watch.sawTraffic = true
        #expect(Self.checks(1, on: &watch) == [false], "the check that sees traffic is not quiet")
        #expect(!watch.sawTraffic, "each check clears the mark")
        #expect(Self.checks(4, on: &watch) == [false, false, false, true], "four quiet checks after the traffic")
    }
}
