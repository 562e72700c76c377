import BLIPTestSupport
import Foundation
import Testing

/// `blipscope-bench density` through the real relay child: every pull caught up and still open
/// after its pings, and the report's lines with their numbers.
@Suite struct DensityBenchTests {
    @Test("twenty idle continuous pulls through the relay: caught up, pinged, all alive, each line of the report")
    func twentyIdlePulls() async throws {
        let finished = try await BlipscopeExecutable.runBench(
            ["density", "--sessions", "20", "--idle-seconds", "2", "--ping-seconds", "1"], within: 600)
        #expect(finished.status == 0, "\(finished.errors)")
        let report = finished.output
        #expect(report.contains("alive after the idle window: 20 of 20"))
        #expect(report.contains(/per session: \d+\.\d kB open, \d+\.\d kB after 2 s idle/))
        #expect(report.contains(/descriptors: \d+ before, \d+ with all open \(\d\.\d\d per session\)/))
        #expect(report.contains(/idle CPU: \d+\.\d{3} s over 2 s/))
    }
}
