import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import Relay
import CommandLineSupport
import Replication
import ServiceLifecycle

/// The benchmarks, a tool apart from the product (`make bench` builds and runs it): each relay
/// benchmark runs the `blipscope` executable beside this one as its child.
@main
struct BlipScopeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blipscope-bench",
        abstract: "BlipScope's benchmarks, to run in release mode (make bench): the relay against nginx and a bare forwarder, the codec, the analyzer, the policy engine, a pull, a soak.",
        subcommands: [CodecBench.self, RelayBench.self, ForwardBench.self, InstructionsBench.self, PullBench.self, DensityBench.self, PolicyBench.self, AnalyzerBench.self, SoakBench.self]
    )
}

struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "BLIP codec throughput (ISA-L and zlib decoding) against bare zlib and ISA-L calls on the same data."
    )

    @Option(help: "Megabytes of uncompressed payload per workload.")
    var megabytes: Int = 64

    @Option(help: "Repetitions per workload; the best is reported.")
    var rounds: Int = 5

    @Option(help: "Run only the workloads whose name contains this text.")
    var only: String?

    @Flag(help: "Skip the baselines and the zlib comparison (to profile the codec alone).")
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

    @Option(help: "Run only the workloads whose letter is listed, e.g. AD.")
    var only = "ABCDE"

    @Option(help: "CPU placement: spread (peers on the first CPU, relay or nginx on the others), shared (all on the first CPU) or free (the kernel decides); several, comma-separated (spread,free), run one after the other.")
    var placement = "spread"

    @Option(help: "Run A, B, C and D this many times on each path, interleaved, and report medians (D pools its round trips).")
    var rounds = 5

    @Flag(inversion: .prefixedNo, help: "Before the rounds of A, B and C, send a tenth of the workload through each path untimed, so that no round pays a process's one-time start-up costs.")
    var warmUp = true

    @Flag(help: "Run the relay with metrics on (--admin 127.0.0.1:0), to compare its CPU with metrics off.")
    var metrics = false

    @Flag(help: "Run the relay with --capture into a temporary directory; report the capture's bytes per message.")
    var capture = false

    @Flag(help: "Also run the workloads through Debian's nginx as a blind WebSocket proxy, for comparison.")
    var nginx = false

    @Flag(help: "Also run the workloads through a bare SwiftNIO TCP forwarder (bytes copied both ways, nothing decoded or logged), the CPU floor of the relay's library on this machine, and through the relay with --no-decode (what decoding, analysis and logging cost shows apart).")
    var floor = false

    @Flag(help: "Mediate: the relay denies one request at the start of each session, so both directions are re-encoded (renumbered, CRC recomputed) from then on.")
    var mediate = false

    @Option(help: "Run the relay with this policy file (e.g. samples/policy-bench-20.yaml, 20 rules that match nothing).")
    var policy: String?

    @Flag(help: "With --mediate: the denied request is compressed, so the relay also re-deflates every later compressed frame from the client.")
    var redeflate = false

    @Option(help: "Watch the relay's web view with this many viewers (each on the sessions feed and every live session's message feed); implies --admin.")
    var viewers = 0

    @Flag(help: "With --metrics: no web view (--no-web), to compare the relay's CPU with the history off.")
    var noWeb = false

    @Option(help: "The blipscope binary whose relay is measured (another build's, to compare; default: this one).")
    var relayBinary: String?

    @Option(help: "Use go-blip (Couchbase's Go BLIP library) as the echo server and the load generator: a goblip-peer program with serve and load modes (see docs/testing.md). Needs --placement free.")
    var goblip: String?

    func run() async throws {
        if goblip != nil && (mediate || redeflate) {
            throw ValidationError("--mediate sends its denied request with the benchmark's own peers; it cannot be combined with --goblip")
        }
        let adminPort = viewers > 0 ? try WebViewers.freePort() : nil
        var arguments = adminPort.map { ["--admin", "127.0.0.1:\($0)"] } ?? (metrics ? ["--admin", "127.0.0.1:0"] : [])
        if noWeb { arguments.append("--no-web") }
        let captureDirectory = capture ? CaptureBenchReport.makeDirectory() : nil
        if let captureDirectory { arguments += ["--capture", captureDirectory] }
        if mediate || redeflate { arguments += ["--deny-profile", RelayBenchmark.deniedProfile] }
        if let policy { arguments += ["--policy", policy] }
        let placements = try placement.split(separator: ",").map { name in
            guard let placement = RelayBenchmark.Placement(rawValue: String(name)) else {
                throw ValidationError("unknown placement \(name); use spread, shared or free")
            }
            return placement
        }
        for (index, placement) in placements.enumerated() {
            if index > 0 { print() }
            try await RelayBenchmark(scale: scale, rounds: max(1, rounds), warmUp: warmUp, placement: placement, only: Set(only.uppercased()), relayArguments: arguments, viewers: viewers, adminPort: adminPort,
                                     nginx: nginx, floor: floor,
                                     mediate: mediate || redeflate, denyCompressed: redeflate,
                                     goBlip: goblip.map { GoBlipPeers(path: $0) }, relayBinary: relayBinary).run()
        }
        if let captureDirectory { try CaptureBenchReport(directory: captureDirectory).print() }
    }
}

/// `blipscope-bench forward`: the bare forwarder `blipscope-bench relay --floor` runs as a child process.
struct ForwardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "A bare TCP forwarder on SwiftNIO (the floor bench relay --floor measures): copies bytes to and from 127.0.0.1:PORT.",
        shouldDisplay: false
    )

    @Option(help: "The port on 127.0.0.1 to forward to.")
    var upstreamPort: Int

    @Option(help: "The port on 127.0.0.1 to listen on (0: any free one).")
    var listenPort = 0

    @Option(help: "Event loop threads (default: one per core, as the relay).")
    var threads = System.coreCount

    @Option(help: "Pin the event loops to these CPUs (as relay --cpus).")
    var cpus: String?

    func run() async throws {
        let affinity = try cpus.map { try CPUAffinity(parsing: $0) }
        let group = affinity?.makeEventLoopGroup() ?? MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let listener = try await ByteForwarder.start(listenPort: listenPort, upstreamPort: upstreamPort, group: group)
        let announcement = "blipscope forwarder listening on 127.0.0.1:\(listener.localAddress?.port ?? 0), upstream 127.0.0.1:\(upstreamPort)"
        // Runs until SIGINT or SIGTERM, as the bench's other children.
        let service = ForwarderService(listener: listener) { FileHandleOutput.standardError(announcement) }
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [.init(service: service)],
                                 gracefulShutdownSignals: [.sigint, .sigterm],
                                 logger: Logger(label: "blipscope.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        try await serviceGroup.run()
        try await group.shutdownGracefully()
    }
}

struct InstructionsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instructions",
        abstract: "Instructions the relay executes per round trip on workloads A–C of bench relay, counted by Valgrind's callgrind.",
        discussion: """
            Each workload runs in two fresh relay processes under callgrind, with n and 2n round \
            trips; the difference of their totals over n is one round trip's instructions (user \
            space only). Pass --relay-binary to count another build's relay.
            """
    )

    @Option(help: "The valgrind program (BLIPSCOPE_VALGRIND if set, else valgrind on the PATH).")
    var valgrind = ProcessInfo.processInfo.environment["BLIPSCOPE_VALGRIND"] ?? "valgrind"

    @Option(help: "The blipscope binary whose relay is counted (default: this one).")
    var relayBinary: String?

    @Option(help: "Run only the workloads whose letter is listed, e.g. AB.")
    var only = "ABC"

    @Option(help: "Multiply each workload's round trips (2,000 for A and B, 10 for C).")
    var scale = 1.0

    func run() async throws {
        let program = valgrind.contains("/") ? valgrind : try Self.onPath(valgrind)
        try await InstructionBenchmark(valgrind: program, relayBinary: relayBinary, only: Set(only.uppercased()),
                                       scale: scale).run()
    }

    private static func onPath(_ name: String) throws -> String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ValidationError("\(name) is not on the PATH; pass --valgrind or set BLIPSCOPE_VALGRIND")
    }
}

struct PullBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "One-shot pull of small documents from the embedded gateway, directly and through an in-process relay: docs/s."
    )

    @Option(help: "Documents in the gateway.")
    var docs = 10_000

    @Option(help: "Pulls per path; the fastest is reported.")
    var rounds = 3

    @Flag(help: "Do not log the relayed messages (the relay still decodes them).")
    var noLog = false

    func run() async throws {
        var benchmark = PullBenchmark(documents: max(1, docs), rounds: max(1, rounds))
        if noLog { benchmark.logFile = nil }
        try await benchmark.run()
    }
}

struct PolicyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Policy engine: nanoseconds per message evaluation with rules loaded that match nothing."
    )

    @Option(help: "Evaluations per round.")
    var evaluations = 2_000_000

    @Option(help: "Rounds; the best is reported.")
    var rounds = 5

    @Option(help: "Rules loaded.")
    var rules = 20

    @Option(help: "Run only the scenarios whose name contains this text.")
    var only: String?

    func run() throws {
        var benchmark = PolicyBenchmark(evaluations: max(1, evaluations), rounds: max(1, rounds))
        benchmark.ruleCount = max(1, rules)
        benchmark.only = only
        try benchmark.run()
    }
}

struct AnalyzerBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyzer",
        abstract: "Replication analyzer: messages/s of CPU on a pull (changes batches, one rev per entry, checkpoints)."
    )

    @Option(help: "Messages in the stream.")
    var messages = 200_000

    @Option(help: "Changes entries per batch.")
    var batchSize = 50

    @Option(help: "Rounds; the best is reported.")
    var rounds = 5

    func run() {
        print(BenchMachine.current().line)
        print(AnalyzerBenchmark.run(messages: max(1, messages), batchSize: max(1, batchSize), rounds: max(1, rounds)))
    }
}

