import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks, to run in release mode (swift build -c release).",
        subcommands: [CodecBench.self, RelayBench.self]
    )
}

struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "BLIP codec throughput against bare zlib + crc32 on the same data."
    )

    @Option(help: "Megabytes of uncompressed payload per workload.")
    var megabytes: Int = 64

    @Option(help: "Repetitions per workload; the best is reported.")
    var rounds: Int = 5

    @Option(help: "Run only the workloads whose name contains this text.")
    var only: String?

    @Flag(help: "Skip the bare zlib baseline (to profile the codec alone).")
    var codecOnly = false

    func run() throws {
        try CodecBenchmark(megabytes: megabytes, rounds: rounds, only: only, codecOnly: codecOnly).run()
    }
}

struct RelayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Echo workloads directly and through a relay child process: throughput, CPU, latency, memory."
    )

    @Option(help: "Multiply every workload's request count (e.g. 0.1 for a quick run).")
    var scale = 1.0

    func run() async throws {
        try await RelayBenchmark(scale: scale).run()
    }
}
