import BLIPCore
import BLIPNIO
import Capture
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import Relay

/// `relay --capture` and `--pcap` through real sockets (GitHub issue 6). Truncated files
/// (`kill -9`) are covered by the Capture tests.
@Suite struct RelayCaptureTests {
    static let texts = [String(repeating: "{\"_id\":\"doc\",\"v\":42}", count: 20),
                        String(repeating: "0123456789abcdef", count: 40_000)]  // 640 kB: many frames, ACKs

    /// Echoes small and big bodies, compressed and not; returns the bodies sent.
    static func traffic(_ client: BLIPConnection) async throws -> [String] {
        var sent: [String] = []
        for text in texts {
            for compressed in [false, true] {
                let reply = try await withTimeout {
                    try await client.request(.request(profile: "echo", properties: ["docid": "d1"], body: body(text),
                                                      compressed: compressed))
                }
                #expect(String(buffer: reply.body) == text)
                sent.append(text)
            }
        }
        return sent
    }

    static func directory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("relaycap-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The capture files in `directory`, each session's parts in part order (`…-2` before `…-10`:
    /// a loaded machine flushes more often, so a session can take ten parts or more).
    static func files(in directory: String) throws -> [String] {
        func key(_ name: String) -> (String, Int) {
            let stem = (name as NSString).deletingPathExtension
            guard let dash = stem.lastIndex(of: "-"), let part = Int(stem[stem.index(after: dash)...]) else { return (stem, 0) }
            return (String(stem[..<dash]), part)
        }
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted { key($0) < key($1) }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    static func records(_ path: String) throws -> [CaptureRecord] {
        let reader = try CaptureReader(path: path)
        var records: [CaptureRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// Decodes the capture's frames with a fresh decoder: the bodies of the requests per direction.
    static func decodedRequests(_ records: [CaptureRecord]) throws -> [BLIPDirection: [String]] {
        let decoder = ConnectionDecoder()
        var bodies: [BLIPDirection: [String]] = [:]
        for case .frame(let frame) in records {
            let decoded = try decoder.receive(frame.bytes, from: frame.direction)
            if let message = decoded.message, message.type == .request {
                bodies[frame.direction, default: []].append(String(buffer: message.body))
            }
        }
        return bodies
    }

    @Test func captureHoldsHandshakeFramesHeadsAndCloses() async throws {
        let directory = Self.directory()
        let tapGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let harness = try await RelayHarness.start(relay: { $0.captureDirectory = directory })
        let tap = try await TCPTap.start(group: tapGroup, targetPort: harness.relayAddress.port!)
        let outcome = try await harness.connect(headers: ["Cookie": "SyncGatewaySession=s3cret"]) { $0.port = tap.port }
        let client = try #require(outcome.connection)
        let sent = try await Self.traffic(client)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        try await withTimeout { try await tap.closed.get() }
        try await harness.shutdown()
        try await tap.close()
        try await tapGroup.shutdownGracefully()

        let files = try Self.files(in: directory)
        #expect(files.count == 1)
        let path = try #require(files.first)
        let records = try Self.records(path)
        guard case .handshake(let handshake) = records.first else { Issue.record("no handshake first"); return }
        #expect(handshake.requestLine.hasPrefix("GET /db/_blipsync"))
        #expect(handshake.requestHeaders["Cookie"] == "SyncGatewaySession=<redacted>")
        #expect(handshake.responseStatus == 101)
        #expect(handshake.subprotocol == "BLIP_3+CBMobile_4")
        #expect(try !String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).contains("s3cret"))

        var frames = [0, 0]
        var captured: [[[UInt8]]] = [[], []]
        for case .frame(let frame) in records {
            frames[frame.direction.rawValue] += 1
            captured[frame.direction.rawValue].append(Array(frame.bytes.readableBytesView))
        }
        #expect(frames == summary.statistics.framesForwarded)
        #expect(frames[0] > 0 && frames[1] > 0, "traffic both ways was captured")
        // Byte for byte what each peer put on the wire (unmasked WebSocket payloads), in order.
        #expect(captured[0] == Self.payloads(TCPTap.webSocketBytes(tap.forward.withLockedValue { $0 })))
        #expect(captured[1] == Self.payloads(TCPTap.webSocketBytes(tap.backward.withLockedValue { $0 })))
        #expect(try Self.decodedRequests(records)[.clientToServer] == sent)
        let heads = records.filter { if case .messageHead = $0 { true } else { false } }.count
        #expect(heads == summary.statistics.messagesDecoded.reduce(0, +))
        let closes = records.compactMap { record -> CaptureRecord.Close? in
            if case .close(let close) = record { close } else { nil }
        }
        #expect(closes.contains { $0.side == .client && $0.code == 1000 })
        #expect(!records.contains { if case .dropped = $0 { true } else { false } })

        let imported = try importConnections(fromCaptureFileAt: path)
        let connection = try #require(imported.connections.first)
        var messages = 0
        var errors: [String] = []
        CaptureInspector().inspect(connection) { record in
            switch record.kind {
            case .message: messages += 1
            case .error(let text, _, _): errors.append(text)
            default: break
            }
        }
        #expect(errors.isEmpty)
        #expect(messages == summary.statistics.messagesDecoded.reduce(0, +))
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The payloads of the data messages in a WebSocket byte stream, unmasked and reassembled.
    static func payloads(_ bytes: [UInt8]) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var message: [UInt8]?
        var index = 0
        while index + 2 <= bytes.count {
            let first = bytes[index], second = bytes[index + 1]
            var length = Int(second & 0x7F)
            var position = index + 2
            if length == 126 {
                length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                position += 2
            } else if length == 127 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[position + $1]) }
                position += 8
            }
            var key: [UInt8]?
            if second & 0x80 != 0 {
                key = Array(bytes[position..<position + 4])
                position += 4
            }
            guard position + length <= bytes.count else { break }
            var payload = Array(bytes[position..<position + length])
            if let key { for offset in payload.indices { payload[offset] ^= key[offset % 4] } }
            index = position + length
            switch first & 0x0F {
            case 0x1, 0x2: message = payload
            case 0x0: message? += payload
            default: continue
            }
            if first & 0x80 != 0, let complete = message {
                messages.append(complete)
                message = nil
            }
        }
        return messages
    }

    @Test func rotatesBySize() async throws {
        let directory = Self.directory()
        let harness = try await RelayHarness.start(relay: {
            $0.captureDirectory = directory
            $0.captureMaxFileBytes = 100_000
        })
        let client = try await harness.connected()
        let sent = try await Self.traffic(client)
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let files = try Self.files(in: directory)
        #expect(files.count > 2)
        var all: [CaptureRecord] = []
        for (index, path) in files.enumerated() {
            let records = try Self.records(path)
            guard case .handshake = records.first else { Issue.record("part without handshake"); return }
            all += index == 0 ? records : Array(records.dropFirst())
        }
        #expect(try Self.decodedRequests(all)[.clientToServer] == sent)
        let imported = try importConnections(fromCaptureFileAt: files[0])
        #expect(imported.files.count == files.count)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A capture thread that waits until the test lets it flush: a disk that does not keep up.
    final class SlowDisk: @unchecked Sendable {
        private let condition = NSCondition()
        private var open = false
        private var waited = 0

        var flushesWaited: Int {
            condition.lock()
            defer { condition.unlock() }
            return waited
        }

        func flush(_ session: UInt64) {
            condition.lock()
            if !open { waited += 1; condition.broadcast() }
            while !open { condition.wait() }
            condition.unlock()
        }

        /// Waits (at most `seconds`) until a flush is blocked on the closed disk.
        func waitForBlockedFlush(within seconds: Double = 20) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            condition.lock()
            defer { condition.unlock() }
            while waited == 0 { if !condition.wait(until: deadline) { return waited > 0 } }
            return true
        }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }
    }

    static func slowObserver(_ directory: String, overflow: RelayConfiguration.CaptureOverflowPolicy,
                             disk: SlowDisk) -> CaptureObserver {
        var options = CaptureObserver.Options(directory: directory, overflow: overflow)
        options.writer.maxBufferedBytes = 32 << 10
        options.writer.flushThresholdBytes = 8 << 10
        options.beforeFlush = { disk.flush($0) }
        var logger = Logger(label: "capture-test")
        logger.logLevel = .critical
        return CaptureObserver(options: options, logger: logger)
    }

    @Test func dropPolicyCountsAndRecordsDrops() async throws {
        let directory = Self.directory()
        let disk = SlowDisk()
        let observer = Self.slowObserver(directory, overflow: .drop, disk: disk)
        let harness = try await RelayHarness.start(observers: [observer])
        let client = try await harness.connected()
        _ = try await Self.traffic(client)  // completes although the disk is stuck
        disk.release()
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let path = try #require(try Self.files(in: directory).first)
        let imported = try importConnections(fromCaptureFileAt: path)
        #expect(imported.droppedRecordCount > 0)
        #expect(imported.droppedRecordCount == observer.statistics.droppedRecords)
        #expect(observer.statistics.readHolds == 0)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func backPressurePausesReadingAndLosesNothing() async throws {
        let directory = Self.directory()
        let disk = SlowDisk()
        let observer = Self.slowObserver(directory, overflow: .backPressure, disk: disk)
        let harness = try await RelayHarness.start(observers: [observer])
        let client = try await harness.connected()
        let text = Self.texts[1]
        let request = Task {
            try await client.request(.request(profile: "echo", body: body(text)))
        }
        _ = try await harness.recorder.first {
            if case .flowControl(_, _, let paused) = $0 { paused } else { false }
        }
        #expect(disk.waitForBlockedFlush(), "the capture's flush is what holds the session")
        disk.release()
        let reply = try await withTimeout { try await request.value }
        #expect(reply.body.readableBytes == text.utf8.count)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
        #expect(summary.statistics.flowPauses.reduce(0, +) > 0)
        #expect(observer.statistics.droppedRecords == 0)
        #expect(observer.statistics.readHolds > 0)
        #expect(disk.flushesWaited > 0)

        let path = try #require(try Self.files(in: directory).first)
        let records = try Self.records(path)
        var frames = [0, 0]
        for case .frame(let frame) in records { frames[frame.direction.rawValue] += 1 }
        #expect(frames == summary.statistics.framesForwarded)
        #expect(frames[0] > 0 && frames[1] > 0, "traffic both ways was captured")
        #expect(try Self.decodedRequests(records)[.clientToServer] == [text])
        #expect(!records.contains { if case .dropped = $0 { true } else { false } })
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func pcapReimportsAndDecodes() async throws {
        let directory = Self.directory()
        let pcap = (directory as NSString).appendingPathComponent("relay.pcap")
        let harness = try await RelayHarness.start(relay: { $0.pcapPath = pcap })
        let client = try await harness.connected()
        _ = try await Self.traffic(client)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let connections = try importConnections(fromPcapAt: pcap)
        #expect(connections.count == 1)
        let connection = try #require(connections.first)
        #expect(connection.request?.target == "/db/_blipsync")
        var messages = 0
        var errors: [String] = []
        CaptureInspector().inspect(connection) { record in
            switch record.kind {
            case .message: messages += 1
            case .error(let text, _, _): errors.append(text)
            default: break
            }
        }
        #expect(errors.isEmpty)
        #expect(messages == summary.statistics.messagesDecoded.reduce(0, +))
        try? FileManager.default.removeItem(atPath: directory)
    }
}
