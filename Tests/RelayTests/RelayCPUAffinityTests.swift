import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import Relay

/// `relay --cpus`: one event loop pinned to each listed CPU.
@Suite struct RelayCPUAffinityTests {
    @Test("CPU lists are read as taskset -c writes them")
    func parsesLists() throws {
        let allowed = Set(0..<8)
        #expect(try CPUAffinity(parsing: "1", allowed: allowed).cpus == [1])
        #expect(try CPUAffinity(parsing: "0-3,6", allowed: allowed).cpus == [0, 1, 2, 3, 6])
        #expect(try CPUAffinity(parsing: "2,2,1-2", allowed: allowed).cpus == [2, 1])
    }

    @Test("a malformed list or a CPU the process may not use is refused, naming what is allowed",
          arguments: [("", "is not a CPU id"), ("1-", "is not a CPU id"), ("3-1", "is not a CPU id"),
                      ("a", "is not a CPU id"), ("0,9", "may run on CPUs 0-3,5, not 9")])
    func refusesBadLists(text: String, expected: String) {
        #expect {
            try CPUAffinity(parsing: text, allowed: [0, 1, 2, 3, 5])
        } throws: { error in
            (error as? RelayError)?.description.contains(expected) == true
        }
    }

    @Test("this process's allowed CPUs come from the kernel and are not empty")
    func allowedCPUs() {
        let allowed = CPUAffinity.allowedCPUs()
        #expect(!allowed.isEmpty)
        #expect(allowed.count <= System.coreCount || System.coreCount == 1)
    }

    @Test("a relay on a pinned group runs its event loop on that CPU and forwards traffic")
    func pinnedRelayForwards() async throws {
        let cpu = CPUAffinity.allowedCPUs().max()!
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL("ws://127.0.0.1:1")!))
        configuration.cpuAffinity = try CPUAffinity(parsing: String(cpu))
        let relayGroup = configuration.makeEventLoopGroup()
        let peers = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = try await RelayHarness.echoUpstream(group: peers)
        configuration.upstream = .single(UpstreamURL("ws://127.0.0.1:\(upstream.localAddress.port!)")!)
        configuration.listenPort = 0
        var logger = Logger(label: "relay-test")
        logger.logLevel = .error
        let relay = RelayServer(configuration: configuration, group: relayGroup, logger: logger)
        let address = try await relay.start()

        let pinned = try await relayGroup.next().submit { Self.threadCPUs() }.get()
        #expect(pinned == String(cpu))
        let connection = try await RelayHarness.client(to: address.port!, group: peers)
        let reply = try await withTimeout {
            try await connection.request(.request(profile: "echo", body: ByteBuffer(string: "pinned"), compressed: true))
        }
        #expect(String(buffer: reply.body) == "pinned")
        try await connection.close()
        try await relay.shutdown()
        try? await upstream.close()
        try await relayGroup.shutdownGracefully()
        try await peers.shutdownGracefully()
    }

    /// `Cpus_allowed_list` of the calling thread.
    static func threadCPUs() -> String? {
        guard let status = try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
    }

    @Test("relay --cpus with a CPU this process may not use: an error naming it before anything listens")
    func commandRefusesUnknownCPU() async throws {
        let result = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--cpus", "1023"])
        #expect(result.status != 0)
        #expect(result.errors.contains("--cpus: CPU list \"1023\": this process may run on CPUs"))
        #expect(!result.errors.contains("listening"))
    }
}
