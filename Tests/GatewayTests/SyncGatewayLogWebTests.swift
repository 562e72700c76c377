import BLIPTestSupport
import Foundation
import NIOPosix
import Testing
@testable import Gateway

/// Sync Gateway's lines beside the sessions in the web view, as a user runs it: `blipscope web
/// CAPTURE --sg-log FILE` after the fact, and `blipscope relay --admin … --sg-log FILE` following
/// the log while a gateway (writing SG's log format) serves a pull through the relay.
@Suite struct SyncGatewayLogWebTests {
    static func json(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    /// Every line of `context` in the session's `sglog`, each tied to a kept request of its profile.
    static func expectJoined(_ sglog: [String: Any], written: [String], context: Substring, port: Int, session: Int) async throws {
        let lines = try #require(sglog["lines"] as? [[String: Any]])
        let mine = written.filter { $0.contains("c:[\(context)]") }
        #expect(lines.compactMap { $0["line"] as? String } == mine)
        for line in lines {
            let text = try #require(line["line"] as? String)
            guard text.contains("Type:") else { continue }
            let seq = try #require(line["seq"] as? Int, "\(text) is tied to a kept request")
            let detail = try Self.json(try await webGet(port: port, path: "/api/sessions/\(session)/messages/\(seq)",
                                                        group: MultiThreadedEventLoopGroup.singleton).body)
            let row = try #require(detail["row"] as? [String: Any])
            #expect(row["n"] as? Int == line["request"] as? Int && row["ty"] as? String == "MSG" && row["d"] as? Int == 0)
            #expect(text.contains("Type:\(row["p"] as? String ?? "?")"), "\(text) beside \(row)")
            #expect((detail["sgLog"] as? [[String: Any]])?.contains { $0["line"] as? String == text } == true)
        }
    }

    @Test func webShowsTheGatewaysLinesBesideACapturedSession() async throws {
        let directory = try SyncGatewayLogJoinTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (written, context, sgLog) = try await SyncGatewayLogJoinTests.capturedPull(in: directory)
        let web = try BlipscopeExecutable.start(["web", directory + "/capture", "--sg-log", sgLog])
        defer { web.kill() }
        let printed = try await web.waitForOutput(within: 60) { $0.contains("\n") }
        let port = try #require(BlipscopeExecutable.port(after: "127.0.0.1", in: printed))
        #expect(web.errors.text.contains("\(written.count) Sync Gateway log line(s)"))
        let group = MultiThreadedEventLoopGroup.singleton
        let session = try Self.json(try await webGet(port: port, path: "/api/sessions/1", group: group).body)
        #expect(session["correlationID"] as? String == String(context))
        #expect((session["sgLog"] as? [String: Any])?["lines"] as? Int == written.count)
        let sglog = try Self.json(try await webGet(port: port, path: "/api/sessions/1/sglog", group: group).body)
        try await Self.expectJoined(sglog, written: written, context: context, port: port, session: 1)
        #expect(try await web.stop() == 0)

        let missing = try await BlipscopeExecutable.run(["web", directory + "/capture", "--sg-log", directory + "/nope.log"])
        #expect(missing.status != 0 && missing.errors.contains("Sync Gateway log \(directory)/nope.log: no such file"))
    }

    @Test func aRelayFollowsTheGatewaysLogBesideItsLiveSessions() async throws {
        let directory = try SyncGatewayLogJoinTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sgLog = directory + "/sg_info.log"
        let (gateway, gatewayPort) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath,
                                                                                 "--sg-log-file", sgLog])
        defer { gateway.kill() }
        let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(gatewayPort)",
                                                   "--admin", "127.0.0.1:0", "--sg-log", sgLog])
        defer { relay.kill() }
        let port = try await relay.announcedPort()
        let adminPort = try await relay.announcedPort(after: "admin listener at ")
        let group = MultiThreadedEventLoopGroup.singleton

        let replicator = ReplicatorConfiguration(url: "ws://127.0.0.1:\(port)/db", direction: .pull)
        _ = try await Replicator(configuration: replicator, database: GatewayDatabase(name: "local"), group: group).run()

        // The gateway wrote its lines as it handled the pull; the relay reads them as they come.
        // Bounded: until every line of the session is beside it.
        var sglog: [String: Any] = [:]
        var written: [String] = []
        var context: Substring = ""
        for _ in 0..<600 {
            written = ((try? String(contentsOfFile: sgLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            context = written.first.flatMap { $0.range(of: "c:[") }.map { written[0][$0.upperBound...].prefix { $0 != "]" } } ?? ""
            let response = try await webGet(port: adminPort, path: "/api/sessions/1/sglog", group: group)
            if response.status == 200, let json = try? Self.json(response.body),
               (json["lines"] as? [Any])?.count == written.count, !written.isEmpty {
                sglog = json
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!written.isEmpty && (sglog["lines"] as? [Any])?.count == written.count, "\(written.count) lines written: \(sglog)")
        #expect(sglog["correlationID"] as? String == String(context))
        try await Self.expectJoined(sglog, written: written, context: context, port: adminPort, session: 1)

        let refused = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--sg-log", sgLog])
        #expect(refused.status != 0 && refused.errors.contains("--sg-log shows Sync Gateway's lines in the web view: give --admin"))
        #expect(try await relay.stop() == 0)
        #expect(try await gateway.stop() == 0)
    }
}
