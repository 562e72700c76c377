import BLIPCore
import BLIPNIO
import Capture
import Foundation
import NIOCore
import Policy
import Testing
@testable import Relay

/// A capture of a session the relay intervened in holds both legs (GitHub issue 6: "when the relay
/// re-encoded a direction, the bytes on each leg"): the client's leg with the denied request and
/// the relay's ERR, the upstream's leg with the renumbered, re-deflated traffic. Each leg decodes
/// on its own, in the capture file and in the pcap exported from it (two TCP streams).
@Suite struct RelayMediatedCaptureTests {
    struct Seen: Equatable {
        var direction: BLIPDirection
        var type: MessageType
        var number: MessageNumber
        var profile: String?
    }

    /// Decodes one connection; fails the test on any decoding error.
    static func messages(_ connection: CapturedConnection) -> [Seen] {
        var seen: [Seen] = []
        CaptureInspector().inspect(connection) { record in
            switch record.kind {
            case .message(let message):
                seen.append(Seen(direction: record.direction, type: message.type, number: message.number,
                                 profile: message.type == .request ? message.profile : record.requestProfile))
            case .error(let text, _, _):
                Issue.record("leg \(connection.index) does not decode: \(text)")
            default:
                break
            }
        }
        return seen
    }

    @Test func bothLegsOfAnInterveningSessionAreCapturedAndEachDecodes() async throws {
        let directory = RelayCaptureTests.directory()
        let store = PolicyStore(document: try PolicyDocument(yaml: """
            rules:
              - name: no-secrets
                match: { from: client, profile: secret }
                action: { deny: { code: 403, message: "no" } }
            """))
        let harness = try await RelayHarness.start(relay: { $0.captureDirectory = directory; $0.policy = store })
        let client = try await harness.connected()
        for (index, profile) in ["echo", "echo", "secret", "echo", "echo"].enumerated() {
            let reply = try await withTimeout {
                try await client.request(.request(profile: profile, body: body("{\"n\":\(index)}"), compressed: true))
            }
            #expect(reply.type == (profile == "secret" ? .error : .response))
        }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let path = try #require(try RelayCaptureTests.files(in: directory).first)
        let imported = try importConnections(fromCaptureFileAt: path)
        try #require(imported.connections.count == 2, "a client leg and an upstream leg")
        let clientLeg = Self.messages(imported.connections[0])
        let upstreamLeg = Self.messages(imported.connections[1])

        // The client's leg: its five requests numbered 1…5, the third answered by the relay's ERR.
        let clientRequests = clientLeg.filter { $0.type == .request }
        #expect(clientRequests.map(\.number) == [1, 2, 3, 4, 5])
        #expect(clientLeg.contains(Seen(direction: .serverToClient, type: .error, number: 3, profile: "secret")))
        // The upstream's leg: four requests numbered 1…4 without a gap, all echo, each answered.
        let upstreamRequests = upstreamLeg.filter { $0.type == .request }
        #expect(upstreamRequests.map(\.number) == [1, 2, 3, 4])
        #expect(upstreamRequests.allSatisfy { $0.profile == "echo" })
        #expect(upstreamLeg.filter { $0.type == .response }.map(\.number).sorted() == [1, 2, 3, 4])

        // Exported as pcap, the legs are two TCP streams that decode the same way.
        let pcap = (directory as NSString).appendingPathComponent("legs.pcap")
        let exporter = try PcapExporter(path: pcap)
        try exporter.export(imported.connections)
        exporter.close()
        let reimported = try importConnections(fromPcapAt: pcap)
        try #require(reimported.count == 2)
        #expect(Self.messages(reimported[0]).filter { $0.type == .request }.count == 5)
        #expect(Self.messages(reimported[1]).filter { $0.type == .request }.count == 4)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
