import Testing
@testable import blipscope_bench

/// How `bench relay` compares one proxy's CPU with another's over alternating rounds.
@Suite struct CPUComparisonTests {
    @Test func aDisturbedRoundMovesTheTotalsButNotTheMedian() throws {
        // Five rounds of nginx at 0.40 s; the relay at 0.50 s, except a first round at 0.70 s that
        // paid for the process's start (or for a neighbour on the machine).
        let relay = [0.70, 0.50, 0.50, 0.52, 0.48]
        let nginx = [0.40, 0.40, 0.40, 0.40, 0.40]
        let comparison = try #require(CPUComparison(relay, over: nginx))
        #expect(abs(comparison.median - 1.25) < 1e-12)
        #expect(abs(comparison.lowest - 1.2) < 1e-12)
        #expect(abs(comparison.highest - 1.75) < 1e-12)
        #expect(abs(comparison.ofTotals - 1.35) < 1e-12)
        #expect(comparison.text == "1.25× (rounds 1.20–1.75; totals 1.35×)")
    }

    @Test func eachRoundIsPairedWithItsOwnRound() throws {
        // The machine slowed down for both paths in the last two rounds: per-round ratios stay 1.1.
        let comparison = try #require(CPUComparison([1.1, 1.1, 2.2, 2.2], over: [1.0, 1.0, 2.0, 2.0]))
        #expect(abs(comparison.median - 1.1) < 1e-12)
        #expect(abs(comparison.highest - comparison.lowest) < 1e-12)
    }

    @Test func anEvenNumberOfRoundsTakesTheMiddlePairsMean() throws {
        let comparison = try #require(CPUComparison([1.0, 1.2, 1.4, 3.0], over: [1, 1, 1, 1]))
        #expect(abs(comparison.median - 1.3) < 1e-12)
    }

    @Test func oneRoundIsItsOwnMedian() throws {
        let comparison = try #require(CPUComparison([0.3], over: [0.2]))
        #expect(comparison.text == "1.50×")
    }

    @Test func roundsThatMeasuredNothingOrDoNotPairUpCompareNothing() {
        // Read in ticks of 10 ms (a process whose CPU clock cannot be read), a very short round
        // can measure zero.
        #expect(CPUComparison([0.5, 0], over: [0.4, 0.4]) == nil)
        #expect(CPUComparison([0.5, 0.5], over: [0.4, 0]) == nil)
        #expect(CPUComparison([0.5], over: [0.4, 0.4]) == nil)
        #expect(CPUComparison([], over: []) == nil)
    }
}
