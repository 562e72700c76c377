import BLIPTestSupport
import Foundation
import Testing

/// `blipscope-bench instructions` runs a relay child under callgrind, twice per workload. Runs
/// only when `BLIPSCOPE_VALGRIND` names a valgrind that can run Swift 6 binaries (Debian 12's
/// 3.19 cannot); callgrind makes the relay some 50 times slower, so the workload is small.
@Suite struct InstructionsBenchTests {
    static let valgrind = ProcessInfo.processInfo.environment["BLIPSCOPE_VALGRIND"]

    @Test("A relayed round trip of small compressed echoes costs a positive, bounded number of instructions, from two callgrind runs",
          .enabled(if: valgrind != nil, "set BLIPSCOPE_VALGRIND to a valgrind that runs Swift 6 binaries"))
    func countsInstructionsPerRoundTrip() async throws {
        let finished = try await BlipscopeExecutable.runBench(
            ["instructions", "--only", "B", "--scale", "0.1", "--valgrind", Self.valgrind!], within: 900)
        #expect(finished.status == 0, "\(finished.errors)")
        let line = try #require(finished.output.split(separator: "\n").first { $0.hasPrefix("B ") })
        let fields = line.split(separator: " ")
        // n, total(n), total(2n), per round trip.
        let numbers = fields.compactMap { UInt64($0) }
        try #require(numbers.count >= 4, "\(line)")
        let (n, once, twice, perRoundTrip) = (numbers[numbers.count - 4], numbers[numbers.count - 3],
                                              numbers[numbers.count - 2], numbers[numbers.count - 1])
        #expect(n == 200)
        #expect(twice > once)
        #expect(perRoundTrip == (twice - once + n / 2) / n || perRoundTrip == (twice - once) / n)
        // Decoding, analysing and logging two 300-byte messages is thousands of instructions, not millions.
        #expect(perRoundTrip > 1_000 && perRoundTrip < 10_000_000)
    }
}
