import Foundation
import Gateway
import Testing

/// Pull throughput of small documents, gateway → replicator on loopback. Runs only with
/// `BLIPSCOPE_BENCH=1` (numbers mean something in release builds only); prints documents/s.
@Suite struct PullThroughputTests {
    static let enabled = ProcessInfo.processInfo.environment["BLIPSCOPE_BENCH"] != nil
    static let documents = Int(ProcessInfo.processInfo.environment["BLIPSCOPE_BENCH_DOCS"] ?? "") ?? 10_000

    @Test(.enabled(if: enabled, "a benchmark: set BLIPSCOPE_BENCH=1 (release builds only give numbers that mean something)")) func pullSmallDocuments() async throws {
        try await withGateway(timeout: .seconds(300), seed: { database in
            for index in 0..<Self.documents {
                try database.put(String(format: "doc-%06d", index),
                                 body: ["index": .number(String(index)), "name": .string("document \(index)"),
                                        "channels": .string("bench")])
            }
        }) { gateway in
            for round in 1...3 {
                let local = GatewayDatabase(name: "local")
                let clock = ContinuousClock()
                let start = clock.now
                let result = try await gateway.replicator(.pull, into: local).run()
                let elapsed = clock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                #expect(result.pulledRevisions == Self.documents)
                print("pull round \(round): \(Self.documents) docs in \(String(format: "%.3f", seconds)) s = \(Int(Double(Self.documents) / seconds)) docs/s")
            }
        }
    }
}
