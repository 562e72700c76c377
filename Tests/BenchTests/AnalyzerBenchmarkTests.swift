import Testing
import Replication
@testable import blipscope_bench

@Suite("Analyzer benchmark")
struct AnalyzerBenchmarkTests {
    @Test("the benchmark stream is a clean pull: every rev wanted and accepted, no findings")
    func cleanStream() {
        let stream = AnalyzerBenchmark.makeStream(messages: 1_100, batchSize: 10)
        let analyzer = SessionAnalyzer()
        for (index, item) in stream.enumerated() {
            analyzer.observe(message: item.message, from: item.direction, at: Double(index))
        }
        #expect(analyzer.findings.isEmpty, "\(analyzer.findings.prefix(3))")
        let summary = analyzer.summary()
        #expect(summary.pulled.revisionsSent == summary.pulled.revisionsAccepted)
        #expect(summary.pulled.revisionsSent == summary.pulled.revisionsOffered)
        #expect(AnalyzerBenchmark.run(messages: 200, rounds: 1).hasPrefix("analyzer: "))
    }
}
