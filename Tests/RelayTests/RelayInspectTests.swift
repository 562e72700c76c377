import BLIPCore
import BLIPNIO
import Foundation
import Testing
@testable import Relay

/// `blipscope inspect` on what the relay wrote, through real sockets: a capture directory of
/// several sessions in several parts each.
@Suite struct RelayInspectTests {
    @Test("inspect DIR reads every session of relay --capture, each session's parts as one",
          .enabled(if: BlipscopeCommand.executable != nil))
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

        let (status, output) = try BlipscopeCommand.run(["inspect", directory, "--summary", "--json"])
        #expect(status == 0)
        let summaries = try BlipscopeCommand.jsonLines(output)
        #expect(summaries.map { $0["connection"] as? Int } == [0, 1])
        #expect(summaries.allSatisfy { $0["messagesFromClient"] as? Int == 4 && $0["messagesFromServer"] as? Int == 4 })

        // The files in any order, named one by one: the same sessions, in the same order.
        let listed = try BlipscopeCommand.run(["inspect"] + files.reversed() + ["--summary", "--json"]).output
        #expect(listed == output)
        let text = try BlipscopeCommand.run(["inspect", directory]).output
        #expect(text.contains("# 16 messages, 0 problems, 2 connections"), "\(text.suffix(300))")
    }
}
