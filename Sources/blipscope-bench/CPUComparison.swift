import Foundation

/// One proxy's CPU against another's over a benchmark's alternating rounds.
///
/// The headline is the median of the per-round ratios: the rounds alternate the paths, so each
/// ratio pairs two runs made under the same load of the machine, and the median drops a round
/// that something else on the machine disturbed. The ratio of the totals is kept beside it: it is
/// the figure earlier builds of the benchmark printed, and a round-to-round drift shows as a gap
/// between the two.
struct CPUComparison: Equatable {
    /// Median of the per-round ratios.
    let median: Double
    /// The lowest and highest per-round ratio.
    let lowest: Double
    let highest: Double
    /// Sum of the numerator's rounds over the sum of the denominator's.
    let ofTotals: Double

    /// Nil when the rounds do not pair up or a round measured no CPU on either path (a process
    /// whose CPU clock cannot be read is measured in ticks of 10 ms, and a very short round can
    /// read zero).
    init?(_ numerators: [Double], over denominators: [Double]) {
        guard !numerators.isEmpty, numerators.count == denominators.count,
              !numerators.contains(where: { $0 <= 0 }), !denominators.contains(where: { $0 <= 0 }) else { return nil }
        let each = zip(numerators, denominators).map { $0 / $1 }
        median = RelayBenchmark.median(each)
        lowest = each.min()!
        highest = each.max()!
        ofTotals = numerators.reduce(0, +) / denominators.reduce(0, +)
    }

    /// `1.30× (rounds 1.24–1.39; totals 1.33×)`; one round: `1.30×`.
    var text: String {
        guard lowest < highest || ofTotals != median else { return String(format: "%.2f×", median) }
        return String(format: "%.2f× (rounds %.2f–%.2f; totals %.2f×)", median, lowest, highest, ofTotals)
    }
}
