import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOPosix
import Relay

/// `blipscope-bench relay`: the same workloads directly against an echo server and through a
/// `blipscope relay` child process (decoding every message and logging it to a file).
struct RelayBenchmark {
    var scale = 1.0
    /// Each of A, B and C runs this many times on every path, interleaved; D pools its latencies.
    var rounds = 5
    /// Before A's, B's and C's rounds, each path first carries a tenth of the workload untimed.
    var warmUp = true
    /// Where the benchmark's peers and the proxy run (``Placement``).
    var placement = Placement.spread
    var only: Set<Character> = ["A", "B", "C", "D", "E"]
    /// Extra arguments for the relay child (`--metrics` passes `--admin 127.0.0.1:0`).
    var relayArguments: [String] = []
    /// Web view viewers (``WebViewers``) on the relay's admin listener at ``adminPort``.
    var viewers = 0
    var adminPort: Int? = nil
    /// Also run every workload through Debian's nginx as a blind WebSocket proxy (``NginxProcess``).
    var nginx = false
    /// Also run every workload through a bare SwiftNIO forwarder child (``ByteForwarder``, `bench
    /// forward`): the CPU floor of the relay's library, placed as the relay is; and through the
    /// relay under test with `--no-decode`: its sessions and framing without decoding, analysis
    /// and logging, so what those cost shows apart.
    var floor = false
    /// The relay runs with `--deny-profile` ``deniedProfile``; each relayed connection first sends
    /// one such request (answered by the relay with an ERR), so both directions are re-encoded.
    var mediate = false
    /// With ``mediate``: deny a compressed request, so the relay re-deflates every later
    /// compressed frame from the client (the costlier re-encoding).
    var denyCompressed = false
    static let deniedProfile = "bench-denied"
    /// go-blip as the peers (``GoBlipPeers``) instead of the benchmark's own Swift ones.
    var goBlip: GoBlipPeers? = nil
    /// Another build's `blipscope` to run the relay with (nil: this one).
    var relayBinary: String? = nil
    var logFile = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-bench-relay.log").path

    /// A throughput workload: one request sent over and over on one connection, echoed back.
    struct Workload {
        let letter: Character
        let name: String
        let request: BLIPMessage
        /// Round trips at scale 1.
        let roundTrips: Int
        let inFlight: Int

        static let all: [Workload] = {
            let small = RelayBenchmark.body(300)
            return [
                Workload(letter: "A", name: "A  300 B echo, 8 in flight",
                         request: .request(profile: "echo", body: small), roundTrips: 20_000, inFlight: 8),
                Workload(letter: "B", name: "B  300 B echo compressed, 8 in flight",
                         request: .request(profile: "echo", body: small, compressed: true), roundTrips: 20_000, inFlight: 8),
                Workload(letter: "C", name: "C  1 MiB echo compressed, 4 in flight",
                         request: .request(profile: "echo", body: RelayBenchmark.body(1 << 20), compressed: true),
                         roundTrips: 200, inFlight: 4),
            ]
        }()
    }

    /// CPU placement. The benchmark's client and echo server share one event loop; the relay (or
    /// nginx) is the other process. Left to the kernel, the two sometimes share a core and
    /// sometimes not, run by run, which changes throughput by half on a small machine.
    enum Placement: String, CaseIterable, Sendable {
        /// The peers on the first allowed CPU, the proxy on the others (the usual load-test
        /// set-up: the load generator never competes with the system under test).
        case spread
        /// Peers and proxy on the first allowed CPU: no wake-up ever crosses cores.
        case shared
        /// No pinning: the kernel decides (it may move threads between runs).
        case free

        /// (peers' CPUs, proxy's CPUs), or nil for ``free``.
        func cpus(allowed: [Int]) throws -> (peers: [Int], proxy: [Int])? {
            switch self {
            case .free: return nil
            case .shared: return ([allowed[0]], [allowed[0]])
            case .spread:
                guard allowed.count > 1 else { throw BenchError("--placement spread needs two CPUs; this process may use \(allowed)") }
                return ([allowed[0]], Array(allowed.dropFirst()))
            }
        }
    }

    enum Path: Hashable {
        case direct, relay, nginx, floor, undecoded

        /// The first column of a proxy's line: the workload's name for the relay, then the others'.
        func label(workload: String) -> String {
            switch self {
            case .direct, .relay: return workload
            case .nginx: return "   same through nginx"
            case .floor: return "   same through a bare NIO forwarder"
            case .undecoded: return "   same through the relay, --no-decode"
            }
        }
    }

    struct Throughput {
        var seconds: Double
        /// Each round trip's, in nanoseconds (the Swift peers).
        var latencies: [UInt64]
        /// p50 and p99 in microseconds, as go-blip's load reports them.
        var percentiles: (p50: Double, p99: Double)? = nil
    }

    func run() async throws {
        let cpus = try placement.cpus(allowed: CPUAffinity.allowedCPUs().sorted())
        if goBlip != nil && cpus != nil {
            throw BenchError("--goblip runs go-blip's processes where the kernel puts them: use --placement free")
        }
        let group = cpus.map { MultiThreadedEventLoopGroup(pinnedCPUIDs: $0.peers) } ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let goBlipServer = try goBlip.map { try GoBlipPeers.Server(path: $0.path) }
        defer { goBlipServer?.stop() }
        let server = goBlipServer == nil ? try await BenchPeers.startEchoServer(group: group) : nil
        let upstreamPort = goBlipServer?.port ?? server!.localAddress.port!
        try? FileManager.default.removeItem(atPath: logFile)
        let pinning = cpus.map { ["--cpus", $0.proxy.map(String.init).joined(separator: ",")] } ?? []
        let relay = try RelayProcess(upstreamPort: upstreamPort, logFile: logFile, extraArguments: relayArguments + pinning,
                                     binary: relayBinary)
        print(BenchMachine.current().line)
        print("relay bench: \(goBlip == nil ? "" : "go-blip peers, ")echo server :\(upstreamPort), relay :\(relay.port) (pid \(relay.process.processIdentifier)), log \(logFile)")
        // This build's forwarder even with --relay-binary: the floor is the library's, not a build's.
        let forwarder = floor ? try RelayProcess(arguments: ["forward", "--upstream-port", "\(upstreamPort)"] + pinning,
                                                        binary: RelayProcess.benchExecutable) : nil
        defer { forwarder?.stop() }
        if let forwarder { print("bare NIO forwarder :\(forwarder.port) (pid \(forwarder.process.processIdentifier))") }
        // The relay under test, not decoding (a mediating relay decodes to decide: not then).
        var undecoded: RelayProcess?
        if floor, !mediate {
            try? FileManager.default.removeItem(atPath: logFile + ".no-decode")
            do {
                undecoded = try RelayProcess(upstreamPort: upstreamPort, logFile: logFile + ".no-decode",
                                             extraArguments: relayArguments + pinning + ["--no-decode"], binary: relayBinary)
                print("relay --no-decode :\(undecoded!.port) (pid \(undecoded!.process.processIdentifier))")
            } catch {
                // An older --relay-binary has no --no-decode: its usage error's first line says so.
                print("relay --no-decode: not run (\("\(error)".split(separator: "\n").first ?? ""))")
            }
        }
        defer { undecoded?.stop() }
        print("placement \(placement.rawValue)" + (cpus.map { ": peers on CPU \($0.peers.map(String.init).joined(separator: ",")), "
            + "proxy on CPU \($0.proxy.map(String.init).joined(separator: ","))" } ?? ": left to the kernel"))
        print("\(rounds) rounds per workload, alternating\(warmUp ? " after an untimed tenth on each path" : ""); "
              + "rates, ratios and CPU are medians over rounds (ratio range in brackets)")
        print("workload                              direct msg/s  relay msg/s  ratio             relay MB/s  relay CPU s/10k RT")
        defer { relay.stop() }
        var watching: WebViewers?
        if viewers > 0, let adminPort {
            watching = try await WebViewers(count: viewers, port: adminPort, group: group)
            print("\(viewers) web view viewer(s) on the admin listener :\(adminPort)")
        }
        defer { watching?.close() }
        let proxy = nginx ? try NginxProcess(upstreamPort: upstreamPort, cpus: cpus?.proxy) : nil
        defer { proxy?.stop() }
        // A path's CPU seconds so far.
        func cpuSeconds(_ path: Path) -> Double {
            switch path {
            case .direct: return 0
            case .relay: return relay.cpuSeconds
            case .nginx: return proxy?.cpuSeconds ?? 0
            case .floor: return forwarder?.cpuSeconds ?? 0
            case .undecoded: return undecoded?.cpuSeconds ?? 0
            }
        }

        func port(of path: Path) -> Int {
            switch path {
            case .direct: upstreamPort
            case .relay: relay.port
            case .nginx: proxy!.port
            case .floor: forwarder!.port
            case .undecoded: undecoded!.port
            }
        }

        for workload in Workload.all where only.contains(workload.letter) {
            let (name, request, total, inFlight) = (workload.name, workload.request, count(workload.roundTrips), workload.inFlight)
            let paths: [Path] = [.direct, .relay] + (proxy == nil ? [] : [.nginx]) + (forwarder == nil ? [] : [.floor])
                + (undecoded == nil ? [] : [.undecoded])
            var rates: [Path: [Double]] = [:]
            var ratios: [Path: [Double]] = [:]
            // Each round's CPU seconds per path: the CPU column is their median, and each
            // comparison pairs two paths round by round (``CPUComparison``).
            var roundCPU: [Path: [Double]] = [:]
            if warmUp {
                // Untimed: a process's first connections pay once for what a long-running relay
                // never pays again (code paged in, the runtime's type metadata, the allocator's
                // arenas, the codecs' state), which would land in the first round.
                for path in paths {
                    _ = try await measure(port: port(of: path), workload: workload, count: max(1, total / 10), inFlight: inFlight,
                                          group: group, denyFirst: mediate && path == .relay)
                }
            }
            for round in 0..<rounds {
                // Alternate the order so that a drift of the machine favours no path.
                var roundRates: [Path: Double] = [:]
                for path in round.isMultiple(of: 2) ? paths : paths.reversed() {
                    let before = cpuSeconds(path)
                    let result = try await measure(port: port(of: path), workload: workload, count: total, inFlight: inFlight, group: group,
                                                   denyFirst: mediate && path == .relay)
                    if path != .direct {
                        let used = cpuSeconds(path) - before
                        roundCPU[path, default: []].append(used)
                    }
                    roundRates[path] = Double(total) / result.seconds
                }
                for path in paths {
                    rates[path, default: []].append(roundRates[path]!)
                    if path != .direct { ratios[path, default: []].append(roundRates[path]! / roundRates[.direct]!) }
                }
            }
            let directRate = Self.median(rates[.direct]!)
            for path in paths where path != .direct {
                let rate = Self.median(rates[path]!)
                let spread = ratios[path]!.count > 1
                    ? String(format: " (%.2f–%.2f)", ratios[path]!.min()!, ratios[path]!.max()!) : ""
                print(path.label(workload: name).padded(to: 38),
                      (path == .relay ? format(directRate) : "").padded(to: 13), format(rate).padded(to: 12),
                      (String(format: "%.2f", Self.median(ratios[path]!)) + spread).padded(to: 18),
                      String(format: "%.1f", Double(request.body.readableBytes * 2) * rate / 1e6).padded(to: 11),
                      String(format: "%.3f", Self.median(roundCPU[path]!) / Double(total) * 10_000))
            }
            // Each comparison: the median of the rounds' ratios, their spread and the ratio of the totals.
            func compared(_ path: Path, with other: Path) -> CPUComparison? {
                guard let numerators = roundCPU[path], let denominators = roundCPU[other] else { return nil }
                return CPUComparison(numerators, over: denominators)
            }
            if let againstNginx = compared(.relay, with: .nginx) {
                print("   relay against nginx: CPU \(againstNginx.text)"
                      + String(format: ", median ratio %+.2f", Self.median(ratios[.relay]!) - Self.median(ratios[.nginx]!)))
            }
            if let againstFloor = compared(.relay, with: .floor) {
                var line = "   bare NIO forwarder: relay CPU \(againstFloor.text) of it"
                if let floorAgainstNginx = compared(.floor, with: .nginx) { line += ", it \(floorAgainstNginx.text) nginx's" }
                print(line)
            }
            if let againstShell = compared(.relay, with: .undecoded) {
                var line = "   relay --no-decode: relay CPU \(againstShell.text) of it"
                if let shellAgainstNginx = compared(.undecoded, with: .nginx) {
                    line += ", it \(shellAgainstNginx.text) nginx's"
                        + String(format: ", median ratio %+.2f", Self.median(ratios[.undecoded]!) - Self.median(ratios[.nginx]!))
                }
                print(line)
            }
        }
        print("relay peak RSS so far: \(relay.memoryKiB("VmHWM") / 1024) MiB")
        if let watching {
            // What the viewers took shows that they watched: a viewer that followed nothing costs nothing.
            print("web view viewers: \(watching.followedFeeds) message feed(s) followed, \(watching.received / 1024) KiB received")
        }
        if only.contains("D") {
            try await latency(relay: relay, upstreamPort: upstreamPort, group: group, label: placement.rawValue)
            if let proxy { try await latency(relay: relay, upstreamPort: upstreamPort, group: group, via: proxy.port, label: placement.rawValue) }
            // Spread, each hop wakes an idle core, and on a virtual machine whose idle cores halt
            // that wake-up costs more than the relay's work: measure D on the peers' core too.
            if placement == .spread, let peers = cpus?.peers {
                let cpuList = peers.map(String.init).joined(separator: ",")
                let sharedRelay = try RelayProcess(upstreamPort: upstreamPort, logFile: logFile,
                                                   extraArguments: relayArguments + ["--cpus", cpuList], binary: relayBinary)
                defer { sharedRelay.stop() }
                try await latency(relay: sharedRelay, upstreamPort: upstreamPort, group: group, label: "shared")
                if nginx {
                    let sharedProxy = try NginxProcess(upstreamPort: upstreamPort, cpus: peers)
                    defer { sharedProxy.stop() }
                    try await latency(relay: sharedRelay, upstreamPort: upstreamPort, group: group, via: sharedProxy.port, label: "shared")
                }
            }
        }
        if only.contains("E") { try await idleSessions(relay: relay, group: group) }
        // The viewers' connections close on the group's loop, so before the group shuts down.
        watching?.close()
        watching = nil
        try await server?.close()
        try await group.shutdownGracefully()
    }
}
