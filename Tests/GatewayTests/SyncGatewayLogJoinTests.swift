import BLIPTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import Gateway
@testable import Relay

/// A pull through the relay from a gateway that logs as Sync Gateway does: the relay records the
/// 101's X-Correlation-ID, and `inspect --sg-log` lays the gateway's lines beside the captured
/// session, each handled request's line after that request.
@Suite struct SyncGatewayLogJoinTests {
    /// A pull through the relay into `directory/capture`, from a gateway writing Sync Gateway's
    /// log lines to `directory/sg_info.log`; returns the lines and their correlation ID.
    static func capturedPull(in directory: String) async throws -> (lines: [String], context: Substring, log: String) {
        let sgLog = directory + "/sg_info.log"
        let lines = NIOLockedValueBox<[String]>([])
        try await withGateway(configure: { configuration in
            configuration.syncGatewayLog = { line in lines.withLockedValue { $0.append(line) } }
        }, seed: ReplicatorTests.seedGateway) { gateway in
            var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                                 port: gateway.server.port)))
            configuration.listenPort = 0
            configuration.captureDirectory = directory + "/capture"
            let recorder = RelayEventTally()
            let relay = RelayServer(configuration: configuration, group: gateway.group,
                                    logger: Logger(label: "test.relay") { _ in SwiftLogNoOpLogHandler() }, observers: [recorder])
            let port = try #require(try await relay.start().port)
            let local = GatewayDatabase(name: "local")
            let replicator = ReplicatorConfiguration(url: "ws://127.0.0.1:\(port)/db", direction: .pull)
            _ = try await Replicator(configuration: replicator, database: local, group: gateway.group).run()
            await recorder.waitForClosedSessions(1)
            try await relay.shutdown()
        }
        let written = lines.withLockedValue { $0 }
        try (written.joined(separator: "\n") + "\n").write(toFile: sgLog, atomically: true, encoding: .utf8)
        let context = try #require(written.first.flatMap { $0.range(of: "c:[") }.map { written[0][$0.upperBound...].prefix { $0 != "]" } })
        return (written, context, sgLog)
    }

    static func temporaryDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sglog-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func inspectShowsTheGatewaysLinesBesideTheRequestsTheyHandled() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (written, context, sgLog) = try await Self.capturedPull(in: directory)

        let result = try await BlipscopeExecutable.run(["inspect", directory + "/capture", "--sg-log", sgLog, "--json"])
        #expect(result.status == 0, "\(result.errors)")
        let records = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        // Every line the gateway wrote is there, each right after the request it handled.
        let sgRecords = records.enumerated().filter { $0.element["type"] as? String == "SGLOG" }
        #expect(sgRecords.count == written.count && !written.isEmpty)
        for (position, record) in sgRecords {
            let number = try #require(record["number"] as? Int, "tied to a request: \(record)")
            let line = try #require(record["line"] as? String)
            #expect(line.contains("c:[\(context)]"))
            let request = records[..<position].last { $0["type"] as? String == "MSG" && $0["from"] as? String == "client" }
            #expect(request?["number"] as? Int == number)
            let profile = try #require((request?["properties"] as? [String: String])?["Profile"])
            #expect(line.contains("Type:\(profile)"), "\(line) follows \(profile) #\(number)")
        }
        let text = try await BlipscopeExecutable.run(["inspect", directory + "/capture", "--sg-log", sgLog])
        #expect(text.output.contains("# Sync Gateway c:[\(context)]: \(written.count) lines"))

        let missing = try await BlipscopeExecutable.run(["inspect", directory + "/capture", "--sg-log", directory + "/nope.log"])
        #expect(missing.status != 0 && missing.errors.contains("Sync Gateway log \(directory)/nope.log: no such file"))
        #expect(!missing.errors.contains("USAGE"), "a runtime error, not a usage error")
    }
}
