import BLIPTestSupport
import Foundation
import Testing
@testable import blipscope_bench

/// The CPU time `bench relay` reads of its child processes (relay, nginx, forwarder).
@Suite struct ProcessCPUClockTests {
    @Test func aBusyChildsClockAgreesWithItsTicks() async throws {
        let child = try RunningCommand(executable: "/bin/sh", arguments: ["-c", "while :; do :; done"])
        defer { child.kill() }
        let pid = child.processIdentifier

        // Wait until the child has run for a tenth of a second of CPU (bounded: 30 s).
        let deadline = Date().addingTimeInterval(30)
        var seconds = 0.0
        while seconds < 0.1, Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
            seconds = try #require(ProcessCPUClock.seconds(of: pid))
        }
        #expect(seconds >= 0.1)
        // Read in this order the ticks fall between the two clock readings, give or take the
        // tick that /proc rounds down to.
        let before = try #require(ProcessCPUClock.seconds(of: pid))
        let ticks = try #require(ProcessCPUClock.tickSeconds(of: pid))
        let after = try #require(ProcessCPUClock.seconds(of: pid))
        #expect(before <= after)
        // The fields after the command name start with the state, then the parent: this process
        // (how nginx's workers are found under their master).
        let fields = try #require(ProcessCPUClock.statFields(of: pid))
        #expect(fields.count > 12 && Int32(fields[1]) == getpid())
        #expect(ticks >= before - 0.02 && ticks <= after + 0.02, "ticks \(ticks), clock \(before)…\(after)")
    }

    @Test func aProcessThatIsGoneHasNoClock() async throws {
        let child = try RunningCommand(executable: "/bin/sh", arguments: ["-c", "exit 0"])
        #expect(try await child.waitForExit() == 0)  // reaped: its pid names nothing now
        #expect(ProcessCPUClock.seconds(of: child.processIdentifier) == nil)
        #expect(ProcessCPUClock.tickSeconds(of: child.processIdentifier) == nil)
        #expect(ProcessCPUClock.statFields(of: child.processIdentifier) == nil)
        #expect(ProcessCPUClock.cpuSeconds(of: child.processIdentifier) == 0)
    }

    /// Read between two readings of the process's own CPU clock, it falls between them, however
    /// much CPU the process's other threads spend meanwhile.
    @Test func thisProcessesClockIsItsOwnCPUTime() throws {
        func own() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        let before = own()
        let read = try #require(ProcessCPUClock.seconds(of: getpid()))
        let after = own()
        #expect(read > 0 && before <= read && read <= after)
    }
}
