import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import Testing
@testable import Relay

/// `blipscope inspect` on what the relay wrote, through real sockets: a capture directory of
/// several sessions in several parts each, and a pcap of a session the upstream dropped.
@Suite struct RelayInspectTests {
    /// `blipscope inspect arguments…`: its standard output, after checking it succeeded.
    static func inspect(_ arguments: [String]) async throws -> String {
        let result = try await BlipscopeExecutable.run(["inspect"] + arguments)
        #expect(result.status == 0, "\(result.errors)")
        return result.output
    }

    static func jsonLines(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    @Test("inspect DIR reads every session of relay --capture, each session's parts as one")
    func directoryOfRotatedSessions() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.captureDirectory = directory
            configuration.captureMaxFileBytes = 128 << 10  // the 640 kB bodies spread a session over parts
        })
        for _ in 0..<2 {
            let client = try await harness.connected()
            _ = try await RelayCaptureTests.traffic(client)
            try await client.close()
            _ = try await harness.recorder.first { if case .sessionClosed = $0 { true } else { false } }
        }
        _ = try await harness.recorder.first { event in
            guard case .sessionClosed(let summary) = event else { return false }
            return summary.info.id == 2
        }
        try await harness.shutdown()
        let files = try RelayCaptureTests.files(in: directory)
        #expect(files.count > 2, "rotated: \(files)")

        let output = try await Self.inspect([directory, "--summary", "--json"])
        let summaries = Self.jsonLines(output)
        #expect(summaries.map { $0["connection"] as? Int } == [0, 1])
        #expect(summaries.allSatisfy { $0["messagesFromClient"] as? Int == 4 && $0["messagesFromServer"] as? Int == 4 })

        // The files in any order, named one by one: the same sessions, in the same order.
        let listed = try await Self.inspect(files.reversed() + ["--summary", "--json"])
        #expect(listed == output)
        let text = try await Self.inspect([directory])
        #expect(text.contains("# 16 messages, 0 problems, 2 connections"), "\(text.suffix(300))")
    }

    @Test("a session the upstream dropped mid-rev: inspect shows the drop and one closedMidTransfer finding")
    func droppedSessionInAPcap() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pcap = (directory as NSString).appendingPathComponent("relay.pcap")
        let harness = try await RelayHarness.start(upstream: { configuration in
            configuration.onRequest = { request, handler in
                if request.profile != "rev" { RelayHarness.echo(request, handler) }  // revs are never answered
            }
        }, relay: { $0.pcapPath = pcap })
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "getCheckpoint", properties: ["client": "c"])) }
        _ = try await client.send(.request(profile: "rev", properties: ["id": "d1", "rev": "1-" + String(repeating: "ab", count: 16)],
                                          body: body("{}")))
        _ = try await harness.recorder.first { event in
            if case .message(let message) = event { message.message.profile == "rev" } else { false }
        }
        try await harness.upstream().channel.close()  // TCP drop, no CLOSE
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let summary = try await Self.inspect([pcap, "--summary"])
        #expect(summary.contains("dropped without CLOSE"), "\(summary)")
        let stuck = try await Self.inspect([pcap, "--stuck", "--json"])
        let findings = Self.jsonLines(stuck)
        #expect(findings.map { $0["kind"] as? String } == ["closedMidTransfer"], "\(stuck)")
        #expect(findings.first?["count"] as? Int == 1)
        let records = Self.jsonLines(try await Self.inspect([pcap, "--json"]))
        #expect(records.contains { $0["type"] as? String == "DROP" && $0["tcp"] as? String == "FIN" })
    }
}
