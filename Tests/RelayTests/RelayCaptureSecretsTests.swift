import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Capture
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import Relay

/// Secrets a client sends (an `Authorization` upgrade header, a session cookie, BLIP properties
/// named like credentials, some spanning frames, compressed and not) never reach the relay's
/// capture files or pcap, which still decode with no error; `--capture-secrets` keeps the
/// properties. What the peers receive is unchanged either way.
@Suite struct RelayCaptureSecretsTests {
    static let marker = "s3cr3tv4lue"
    static let headerToken = "Bearer hdr-\(marker)"
    static let cookie = "SyncGatewaySession=ck-\(marker)"
    /// Long enough that its properties span several frames.
    static let longToken = "tok-" + String(repeating: "\(marker)-", count: 2_500)

    static let tsharkPath: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    struct Run {
        var captureFiles: [String]
        var pcap: String
        var echoed: [Properties]
        var directory: String
        var captureStatistics: CaptureObserver.Statistics?
    }

    /// Requests with secret properties, compressed and not; the echo upstream answers with the
    /// same properties, so both directions carry them.
    static func run(captureSecrets: Bool) async throws -> Run {
        let directory = RelayCaptureTests.directory()
        let pcap = (directory as NSString).appendingPathComponent("relay.pcap")
        let captures = (directory as NSString).appendingPathComponent("captures")
        let harness = try await RelayHarness.start(relay: {
            $0.captureDirectory = captures
            $0.pcapPath = pcap
            $0.captureSecrets = captureSecrets
        })
        let outcome = try await harness.connect(headers: ["Authorization": headerToken, "Cookie": cookie])
        let client = try #require(outcome.connection)
        var echoed: [Properties] = []
        let requests: [BLIPMessage] = [
            .request(profile: "getCheckpoint", properties: ["client": "cp"]),
            .request(profile: "login", properties: ["Authorization": "Bearer prop-\(marker)"], body: body("{}")),
            .request(profile: "login", properties: ["token": longToken], body: body(String(repeating: "{\"a\":1}", count: 5_000)),
                     compressed: true),
            .request(profile: "login", properties: ["token": longToken, "password": "pw-\(marker)"], body: body("{}"),
                     compressed: true),
            .request(profile: "rev", properties: ["id": "doc1"], body: body(String(repeating: "{\"b\":2}", count: 3_000)),
                     compressed: true),
        ]
        for request in requests {
            let reply = try await withTimeout { try await client.request(request) }
            echoed.append(reply.properties)
        }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
        return Run(captureFiles: try RelayCaptureTests.files(in: captures), pcap: pcap, echoed: echoed, directory: directory,
                   captureStatistics: harness.relay.captureStatistics)
    }

    @Test("the redactor reads the recorded streams with the relay's own decoder limits: a message the relay accepts under raised limits is recorded, not withheld")
    func redactorUsesTheRelaysDecoderLimits() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let captures = (directory as NSString).appendingPathComponent("captures")
        let harness = try await RelayHarness.start(upstream: {
            $0.limits.maxPropertiesSize = 300 * 1024
            // Answers with no properties, so the client (default limits) reads every reply.
            $0.onRequest = { request, handler in handler.sendReply(.reply(to: request, properties: [:])) }
        }, relay: {
            $0.captureDirectory = captures
            $0.limits.decoder.maxPropertiesSize = 300 * 1024
        })
        let client = try #require(try await harness.connect().connection)
        // 150 KiB of properties: over the default 100 KiB, within the relay's 300 KiB.
        let large = BLIPMessage.request(profile: "getCheckpoint", properties: ["client": String(repeating: "c", count: 150 * 1024)])
        _ = try await withTimeout { try await client.request(large) }
        _ = try await withTimeout { try await client.request(.request(profile: "getCheckpoint", properties: ["client": "after"])) }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
        let records = try RelayCaptureTests.files(in: captures).flatMap { try RelayCaptureTests.records($0) }
        let notes = records.compactMap { record -> String? in
            if case .note(_, let text) = record { return text } else { return nil }
        }
        #expect(!notes.contains { $0.contains("frames not recorded") }, "\(notes)")
        var limits = BLIPLimits.default
        limits.maxPropertiesSize = 300 * 1024
        let decoder = ConnectionDecoder(limits: limits)
        var clientMessages = 0
        for record in records {
            guard case .frame(let frame) = record, frame.direction == .clientToServer else { continue }
            if try decoder.receive(frame.bytes, from: frame.direction).message != nil { clientMessages += 1 }
        }
        #expect(clientMessages == 2)
    }

    /// Every property of every message the frames decode to (a fresh decoder: checksums and
    /// inflating checked), per direction.
    static func decodedProperties(_ frames: [(BLIPDirection, ByteBuffer)]) throws -> [BLIPDirection: [Properties]] {
        let decoder = ConnectionDecoder()
        var properties: [BLIPDirection: [Properties]] = [:]
        for (direction, bytes) in frames {
            let decoded = try decoder.receive(bytes, from: direction)
            if case .ignored(let error) = decoded.outcome { Issue.record("frame ignored: \(error)") }
            if let message = decoded.message { properties[direction, default: []].append(message.properties) }
        }
        return properties
    }

    static func captureFrames(_ path: String) throws -> [(BLIPDirection, ByteBuffer)] {
        try RelayCaptureTests.records(path).compactMap { record in
            if case .frame(let frame) = record { (frame.direction, frame.bytes) } else { nil }
        }
    }

    static func pcapFrames(_ connection: CapturedConnection) -> [(BLIPDirection, ByteBuffer)] {
        connection.events.compactMap { event in
            guard case .message(_, let payload) = event.kind else { return nil }
            return (event.direction == .clientToServer ? BLIPDirection.clientToServer : .serverToClient, payload)
        }
    }

    static func text(of path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    /// Messages and errors `inspect` reads from a connection.
    static func inspect(_ connection: CapturedConnection) -> (messages: Int, errors: [String], secretsShown: Bool) {
        var messages = 0
        var errors: [String] = []
        var shown = false
        CaptureInspector().inspect(connection) { record in
            switch record.kind {
            case .message: messages += 1
            case .error(let text, _, _): errors.append(text)
            default: break
            }
            if record.textLine(previewLength: 60).contains(marker) || record.jsonLine().contains(marker) { shown = true }
        }
        return (messages, errors, shown)
    }

    @Test func capturesAndPcapHoldNoSecretsAndDecodeCleanly() async throws {
        let run = try await Self.run(captureSecrets: false)
        defer { try? FileManager.default.removeItem(atPath: run.directory) }
        // The peers got what was sent: the echo carried the secrets back.
        #expect(run.echoed[1]["Authorization"] == "Bearer prop-\(Self.marker)")
        #expect(run.echoed[3]["password"] == "pw-\(Self.marker)")

        let path = try #require(run.captureFiles.first)
        #expect(run.captureFiles.count == 1)
        #expect(try !Self.text(of: path).contains(Self.marker), "no secret bytes in the capture file")
        #expect(try !Self.text(of: run.pcap).contains(Self.marker), "no secret bytes in the pcap")
        #expect(try !Self.text(of: run.pcap).contains("hdr-"), "the upgrade's Authorization is redacted in the pcap")

        for frames in [try Self.captureFrames(path), Self.pcapFrames(try #require(importConnections(fromPcapAt: run.pcap).first))] {
            let properties = try Self.decodedProperties(frames)
            #expect(properties[.clientToServer]?.count == 5 && properties[.serverToClient]?.count == 5)
            for list in properties.values {
                for pairs in list {
                    #expect(!pairs.pairs.contains { $0.value.contains(Self.marker) })
                }
                #expect(list.compactMap { $0["token"] }.allSatisfy { $0.hasPrefix("<redacted>*") && $0.count == Self.longToken.count })
                #expect(list.contains { $0["Authorization"]?.hasPrefix("<redacted>") == true })
                #expect(list.contains { $0["id"] == "doc1" }, "other properties stay")
            }
        }

        // Pass-through: the capture's redactor took every frame's reading from the relay's decoder.
        let statistics = try #require(run.captureStatistics)
        #expect(statistics.sessions == 1 && statistics.framesReadByRedactor == 0)

        let imported = try importConnections(fromCaptureFileAt: path)
        let inspected = Self.inspect(try #require(imported.connections.first))
        #expect(inspected.errors.isEmpty && inspected.messages == 10 && !inspected.secretsShown)
        let pcapInspected = Self.inspect(try #require(try importConnections(fromPcapAt: run.pcap).first))
        #expect(pcapInspected.errors.isEmpty && pcapInspected.messages == 10 && !pcapInspected.secretsShown)

        if let tshark = Self.tsharkPath {
            let options = ["-o", "blip.max_uncompressed_size:1024"]
            let verbose = try await RunningCommand.run(tshark, ["-r", run.pcap, "-V"] + options).output
            #expect(verbose.contains("Authorization"), "tshark decoded the properties")
            #expect(!verbose.contains(Self.marker), "tshark shows no secret")
            let bad = try await RunningCommand.run(tshark, ["-r", run.pcap] + options + [
                "-Y", "blip.decompress_buffer_error || _ws.malformed || _ws.expert.severity >= warning"]).output
            #expect(bad.isEmpty, "tshark found errors:\n\(bad)")
        }
    }

    @Test("a password the client's small frames cut three bytes in is all `*` in the capture and the pcap; the echo, whole in one frame, gets the marker")
    func secretCutByTheClientsFrames() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pcap = (directory as NSString).appendingPathComponent("relay.pcap")
        let captures = (directory as NSString).appendingPathComponent("captures")
        let harness = try await RelayHarness.start(relay: {
            $0.captureDirectory = captures
            $0.pcapPath = pcap
        })
        // Payload per frame: maxFrameSize − number and flags (2) − checksum (4). The value starts
        // after the length varint, "Profile\0login\0" and "password\0": 24 bytes.
        let client = try #require(try await harness.connect { $0.limits.maxFrameSize = 24 + 3 + 6 }.connection)
        let password = "pw5-\(Self.marker)"
        let reply = try await withTimeout {
            try await client.request(.request(profile: "login", properties: ["password": password], body: body("{}")))
        }
        #expect(reply.properties["password"] == password, "the peers get what was sent")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let path = try #require(try RelayCaptureTests.files(in: captures).first)
        let captured = try Self.captureFrames(path)
        let firstRequestFrame = try #require(captured.first { $0.0 == .clientToServer }?.1)
        #expect(String(buffer: firstRequestFrame).contains("password\0***"), "the first frame ends three bytes into the value")
        for frames in [captured, Self.pcapFrames(try #require(importConnections(fromPcapAt: pcap).first))] {
            let properties = try Self.decodedProperties(frames)
            #expect(properties[.clientToServer]?.first?["password"] == String(repeating: "*", count: password.utf8.count))
            #expect(properties[.serverToClient]?.first?["password"] == "<redacted>" + String(repeating: "*", count: password.utf8.count - 10))
        }
        #expect(try !Self.text(of: path).contains(Self.marker) && !Self.text(of: pcap).contains("pw5-"))
    }

    @Test func captureSecretsKeepsThePropertiesButNotTheHandshakeHeaders() async throws {
        let run = try await Self.run(captureSecrets: true)
        defer { try? FileManager.default.removeItem(atPath: run.directory) }
        let path = try #require(run.captureFiles.first)
        let properties = try Self.decodedProperties(try Self.captureFrames(path))
        #expect(properties[.clientToServer]?.contains { $0["Authorization"] == "Bearer prop-\(Self.marker)" } == true)
        #expect(properties[.serverToClient]?.contains { $0["token"] == Self.longToken } == true)
        let pcapProperties = try Self.decodedProperties(Self.pcapFrames(try #require(importConnections(fromPcapAt: run.pcap).first)))
        #expect(pcapProperties[.clientToServer]?.contains { $0["password"] == "pw-\(Self.marker)" } == true)
        #expect(try !Self.text(of: run.pcap).contains("hdr-"))
        guard case .handshake(let handshake) = try RelayCaptureTests.records(path).first else {
            Issue.record("no handshake record")
            return
        }
        #expect(handshake.requestHeaders["Authorization"] == "Bearer <redacted>")
        #expect(handshake.requestHeaders["Cookie"] == "SyncGatewaySession=<redacted>")
    }
}
