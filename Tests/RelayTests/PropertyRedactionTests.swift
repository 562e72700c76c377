import BLIPCore
import BLIPNIO
import Capture
import Foundation
import NIOCore
import Testing
@testable import Relay

/// Secret BLIP properties (`token`, `Authorization`, `password`, …) keep their names and lose
/// their values wherever the relay shows or stores properties: the log, the capture's message
/// heads, `inspect`.
@Suite struct PropertyRedactionTests {
    @Test func secretNamesAreFoundInAnyCaseAndTheirValuesReplaced() {
        #expect(PropertyRedaction.isSecret("token") && PropertyRedaction.isSecret("X-Auth-Key"))
        #expect(PropertyRedaction.isSecret("SESSION_id") && PropertyRedaction.isSecret("Password"))
        #expect(!PropertyRedaction.isSecret("Profile") && !PropertyRedaction.isSecret("digest"))
        let redacted = PropertyRedaction.redact(["Profile": "echo", "token": "abc", "id": "doc"])
        #expect(redacted.pairs.map { "\($0.key)=\($0.value)" } == ["Profile=echo", "token=<redacted>", "id=doc"])
    }

    @Test func theCapturesMessageHeadsAndInspectShowNoSecretValue() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try await RelayHarness.start(relay: { $0.captureDirectory = directory })
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "echo", properties: ["password": "hunter2"])) }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let path = try #require(try RelayCaptureTests.files(in: directory).first)
        let heads = try RelayCaptureTests.records(path).compactMap { record -> CaptureRecord.MessageHeadRecord? in
            if case .messageHead(let head) = record { head } else { nil }
        }
        #expect(!heads.isEmpty)
        #expect(heads.allSatisfy { $0.properties["password"] == nil || $0.properties["password"] == "<redacted>" })
        #expect(heads.contains { $0.properties["password"] == "<redacted>" })
        var lines: [String] = []
        for connection in try importConnections(fromCaptureFileAt: path).connections {
            CaptureInspector().inspect(connection) { lines.append($0.textLine()) }
        }
        #expect(lines.contains { $0.contains("password=<redacted>") }, "\(lines)")
        #expect(!lines.contains { $0.contains("hunter2") })
    }
}
