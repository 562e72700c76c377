import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// `blipscope relay` options as an operator uses them: the built relay between the built gateway
/// and the built replicator, on loopback.
@Suite("blipscope relay options, end to end")
struct RelayCommandTests {
    /// The sample documents' IDs, read from the file itself.
    static func sampleIDs() throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: BlipscopeExecutable.sampleDocumentsPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let docs = try #require(object["docs"] as? [[String: Any]])
        return docs.compactMap { $0["_id"] as? String }
    }

    /// A seed file for `gateway --load` holding `ids`, each with a small body.
    static func seedFile(_ ids: [String]) throws -> String {
        let path = NSTemporaryDirectory() + "seed-\(UUID().uuidString).json"
        let docs = ids.map { ["_id": $0, "note": "seeded as \($0)"] }
        try JSONSerialization.data(withJSONObject: ["docs": docs]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Pulls the sample documents from the built gateway through the built relay started with
    /// `relayArguments`, then stops both (Ctrl-C: the relay's log and captures are complete).
    /// Returns the stopped relay, for its outputs.
    static func pullSamples(relay relayArguments: [String]) async throws -> RunningCommand {
        let ids = try sampleIDs()
        let (gateway, gatewayPort) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath])
        defer { gateway.kill() }
        let (relay, relayPort) = try await BlipscopeExecutable.startRelay(["--upstream", "ws://127.0.0.1:\(gatewayPort)"]
                                                                          + relayArguments)
        defer { relay.kill() }
        let pull = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db")
        #expect(pull.status == 0, "\(pull.errors)")
        #expect(pull.result?["pulledRevisions"] as? Int == ids.count)
        #expect(try await relay.stop() == 0)
        #expect(try await gateway.stop() == 0)
        return relay
    }

    @Test("--log-file: one line per decoded message is appended to the file, none goes to standard output")
    func logFile() async throws {
        let ids = try Self.sampleIDs()
        let logPath = NSTemporaryDirectory() + "relay-\(UUID().uuidString).log"
        try "an earlier line\n".write(toFile: logPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        // Ctrl-C closes the sessions and flushes the log; after the exit the file is complete.
        let relay = try await Self.pullSamples(relay: ["--log-file", logPath])

        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.hasSuffix("\n") && !log.contains("\n\n"), "whole lines, one newline each")
        let lines = log.split(separator: "\n").map(String.init)
        #expect(lines.first == "an earlier line", "appended, not replaced")
        #expect(lines.contains { $0.contains("event=open") && $0.contains("db=db") })
        let revLines = lines.filter { $0.contains("dir=U→C type=MSG") && $0.contains("profile=rev ") }
        #expect(revLines.count == ids.count)
        for id in ids { #expect(revLines.contains { $0.contains(" id=\(id) ") }, "a rev line for \(id)") }
        #expect(lines.contains { $0.contains("dir=C→U type=MSG") && $0.contains("profile=subChanges") })
        #expect(relay.output.text.isEmpty, "with --log-file nothing is logged to standard output")
    }

    /// Names of the relay process's event-loop threads (NIO calls them `NIO-ELT-…`).
    static func eventLoopThreads(of pid: Int32) throws -> [String] {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        return tasks.compactMap { task in
            try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.filter { $0.hasPrefix("NIO-ELT-") }
    }

    @Test("--no-decode: a pull goes through and is captured; no message is logged, and inspect reads the pull from the capture")
    func noDecode() async throws {
        let ids = try Self.sampleIDs()
        let logPath = NSTemporaryDirectory() + "relay-\(UUID().uuidString).log"
        let directory = NSTemporaryDirectory() + "relay-capture-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: logPath)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let relay = try await Self.pullSamples(relay: ["--log-file", logPath, "--no-decode", "--capture", directory])
        #expect(relay.errors.text.contains("inspection: off"), "the start line says the relay does not decode")

        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains("event=open") })
        let close = try #require(lines.first { $0.contains("event=close") })
        #expect(close.contains("messagesC2U=0 messagesU2C=0") && !close.contains("bytesU2C=0 "), "\(close)")
        #expect(!lines.contains { $0.contains(" type=MSG") || $0.contains(" type=RPY") }, "no message lines")
        #expect(!lines.contains { $0.contains("event=summary") }, "no replication summary: nothing was analysed")

        // Decoded later: the capture holds the whole pull.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).map { "\(directory)/\($0)" }
        #expect(files.count == 1)
        let inspected = try await BlipscopeExecutable.run(["inspect", try #require(files.first), "--json", "--summary"])
        let first = try #require(inspected.output.split(separator: "\n").first, "\(inspected.errors)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect((summary["pulled"] as? [String: Any])?["documents"] as? Int == ids.count)
    }

    @Test("--no-decode refuses the options that decode to decide")
    func noDecodeRefusesDecidingOptions() async throws {
        for option in [["--strict"], ["--deny-profile", "rev"]] {
            let result = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--no-decode"] + option)
            #expect(result.status != 0)
            #expect(result.errors.contains("--no-decode does not go with \(option[0])"), "\(result.errors)")
        }
    }

    @Test("--threads N runs N event loops, whatever the core count")
    func threads() async throws {
        let many = ProcessInfo.processInfo.activeProcessorCount + 2
        for count in [1, many] {
            let (relay, _) = try await BlipscopeExecutable.startRelay(["--upstream", "ws://127.0.0.1:1", "--threads", "\(count)"])
            defer { relay.kill() }
            // The event loops exist before the relay listens (they run its listener).
            #expect(try Self.eventLoopThreads(of: relay.processIdentifier).count == count)
            #expect(try await relay.stop() == 0)
        }
    }

    @Test("--route DB=URL twice: each database's sessions go to its own upstream; others get 404")
    func twoRoutes() async throws {
        let first = try Self.seedFile(["one-a", "one-b", "one-c"]), second = try Self.seedFile(["two-a", "two-b"])
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let (gateway1, port1) = try await BlipscopeExecutable.startGateway(["--db", "db1", "--load", first])
        defer { gateway1.kill() }
        let (gateway2, port2) = try await BlipscopeExecutable.startGateway(["--db", "db2", "--load", second])
        defer { gateway2.kill() }
        let (relay, relayPort) = try await BlipscopeExecutable.startRelay(["--route", "db1=ws://127.0.0.1:\(port1)",
                                                                          "--route", "db2=ws://127.0.0.1:\(port2)"])
        defer { relay.kill() }

        let pull1 = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db1")
        let pull2 = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db2")
        let elsewhere = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db3")
        #expect(pull1.status == 0 && pull2.status == 0, "\(pull1.errors)\(pull2.errors)")
        #expect(pull1.result?["pulledRevisions"] as? Int == 3)
        #expect(pull2.result?["pulledRevisions"] as? Int == 2)
        #expect(elsewhere.status != 0, "no route and no default upstream for db3")
        #expect(try await relay.stop() == 0)

        let log = relay.output.lines
        #expect(log.contains { $0.contains("event=open") && $0.contains("db=db1 ") && $0.contains("upstream=ws://127.0.0.1:\(port1) correlationID=") })
        #expect(log.contains { $0.contains("event=open") && $0.contains("db=db2 ") && $0.contains("upstream=ws://127.0.0.1:\(port2) correlationID=") })
        #expect(log.contains { $0.contains(" id=one-a ") } && !log.contains { $0.contains(" id=two-a ") && $0.contains("db=db1") })
        #expect(log.contains { $0.contains("event=refused") && $0.contains("status=404") && $0.contains("/db3/") },
                "the refusal is logged: \(log.suffix(5))")
        #expect(try await gateway1.stop() == 0)
        #expect(try await gateway2.stop() == 0)
    }

    @Test("--upstream twice and --route DB=URL1,URL2: sessions take the nodes in turn, each open line names its node")
    func severalNodes() async throws {
        let seed = try Self.seedFile(["doc-a", "doc-b"])
        defer { try? FileManager.default.removeItem(atPath: seed) }
        let (gateway1, port1) = try await BlipscopeExecutable.startGateway(["--db", "db", "--load", seed])
        defer { gateway1.kill() }
        let (gateway2, port2) = try await BlipscopeExecutable.startGateway(["--db", "db", "--load", seed])
        defer { gateway2.kill() }
        let node1 = "127.0.0.1:\(port1)", node2 = "127.0.0.1:\(port2)"
        for arguments in [["--upstream", "ws://\(node1)", "--upstream", "ws://\(node2)"], ["--route", "db=ws://\(node1),ws://\(node2)"]] {
            let (relay, relayPort) = try await BlipscopeExecutable.startRelay(arguments)
            defer { relay.kill() }
            for _ in 0..<2 {
                let pull = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db")
                #expect(pull.status == 0 && pull.result?["pulledRevisions"] as? Int == 2, "\(pull.errors)")
            }
            #expect(try await relay.stop() == 0)
            let opens = relay.output.lines.filter { $0.contains("event=open") }
            #expect(opens.count == 2 && opens[0].hasSuffix("node=\(node1)") && opens[1].hasSuffix("node=\(node2)"), "\(opens)")
            #expect(relay.errors.text.contains("upstream ws://\(node1) + ws://\(node2)") || relay.errors.text.contains("db→ws://\(node1) + ws://\(node2)"),
                    "\(relay.errors.text)")
        }
        #expect(try await gateway1.stop() == 0)
        #expect(try await gateway2.stop() == 0)
    }

    @Test("--insecure: a wss upstream with a self-signed certificate is used; without it the client gets no session")
    func insecureUpstream() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let (gateway, gatewayPort) = try await BlipscopeExecutable.startGateway(
            ["--load", BlipscopeExecutable.sampleDocumentsPath, "--tls-cert", certificate.certificatePath,
             "--tls-key", certificate.keyPath])
        defer { gateway.kill() }
        let upstream = "wss://127.0.0.1:\(gatewayPort)"
        let (trusting, trustingPort) = try await BlipscopeExecutable.startRelay(["--upstream", upstream, "--insecure"])
        defer { trusting.kill() }
        let (verifying, verifyingPort) = try await BlipscopeExecutable.startRelay(["--upstream", upstream])
        defer { verifying.kill() }

        let pulled = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(trustingPort)/db")
        #expect(pulled.status == 0, "\(pulled.errors)")
        #expect(pulled.result?["pulledRevisions"] as? Int == (try Self.sampleIDs()).count)
        let refused = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(verifyingPort)/db")
        #expect(refused.status != 0)
        #expect(refused.result == nil)
        #expect(try await trusting.stop() == 0)
        #expect(try await verifying.stop() == 0)
        let refusal = { (line: String) in line.contains("event=refused") && line.contains("status=502") }
        #expect(verifying.output.lines.contains(where: refusal), "the relay logged its 502: \(verifying.output.text)")
        #expect(!trusting.output.lines.contains(where: refusal))
        #expect(try await gateway.stop() == 0)
    }

    @Test("X-Forwarded-Proto tells the upstream how the client came: https over wss, http over ws")
    func forwardedProto() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let seen = NIOLockedValueBox<[String?]>([])
        var configuration = BLIPWebSocketServer.Configuration()
        let choose = configuration.decide
        configuration.decide = { head in
            // The upgrades only: each relay's health checks (GET /) reach this upstream too.
            if head.uri != "/" { seen.withLockedValue { $0.append(head.headers.first(name: "X-Forwarded-Proto")) } }
            return choose(head)
        }
        let upstream = try await BLIPWebSocketServer.start(configuration, group: group)
        let upstreamURL = "ws://127.0.0.1:\(upstream.localAddress.port!)"
        let (secure, securePort) = try await BlipscopeExecutable.startRelay(
            ["--upstream", upstreamURL, "--tls-cert", certificate.certificatePath, "--tls-key", certificate.keyPath])
        defer { secure.kill() }
        let (plain, plainPort) = try await BlipscopeExecutable.startRelay(["--upstream", upstreamURL])
        defer { plain.kill() }

        for (port, tls) in [(securePort, BLIPClientTLS(caBundlePath: certificate.certificatePath)), (plainPort, nil)] {
            var client = BLIPWebSocketClient.Configuration()
            client.port = port
            client.tls = tls
            let frozen = client
            let outcome = try await withTimeout { try await BLIPWebSocketClient.connect(frozen, group: group) }
            let connection = try #require(outcome.connection, "the relay on \(port) let the client in")
            try await connection.close()
        }
        #expect(seen.withLockedValue { $0 } == ["https", "http"])
        #expect(try await secure.stop() == 0)
        #expect(try await plain.stop() == 0)
        try await upstream.close()
        try await group.shutdownGracefully()
    }
}
