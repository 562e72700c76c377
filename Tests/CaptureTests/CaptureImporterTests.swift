@testable import Capture
import Foundation
import NIOCore
import Testing

/// The whole import path, from a synthesized pcap file on disk to events.
@Suite struct CaptureImporterTests {
    /// A request/reply conversation: the client sends message i, the server answers with reply i.
    static func session(
        _ capture: inout SyntheticCapture, exchanges: Int = 6, segmentSize: Int = 700,
        handshake: Bool = true, closing: Bool = true
    ) {
        if handshake { capture.handshake() }
        capture.send(WebSocketBytes.upgradeRequest, from: .client)
        capture.send(WebSocketBytes.switchingProtocols, from: .server)
        for index in 0..<exchanges {
            let length = [10, 300, 5_000, 70_000][index % 4]
            capture.send(WebSocketBytes.binary(WebSocketBytes.payload(index, length: length), masked: true),
                         from: .client, segmentSize: segmentSize)
            capture.send(WebSocketBytes.binary(WebSocketBytes.payload(100 + index, length: length + 1), masked: false),
                         from: .server, segmentSize: segmentSize)
        }
        guard closing else { return }
        capture.send(WebSocketBytes.close(code: 1000, masked: true), from: .client)
        capture.send(WebSocketBytes.close(code: 1000, masked: false), from: .server)
        capture.close(from: .client)
        capture.close(from: .server)
    }

    static func importFile(_ capture: SyntheticCapture, limits: CaptureLimits = .default) throws -> [CapturedConnection] {
        let path = try capture.writeTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try importConnections(fromPcapAt: path, limits: limits)
    }

    /// Events as comparable text: direction, kind, payload digest.
    static func summary(_ events: [CapturedEvent], withTime: Bool = false) -> [String] {
        events.map { event in
            let direction = event.direction == .clientToServer ? "C>S" : "S>C"
            let time = withTime ? " @\(event.time)" : ""
            switch event.kind {
            case let .message(opcode, payload):
                let sum = payload.readableBytesView.reduce(0) { ($0 &* 31) &+ Int($1) }
                return "\(direction) message \(opcode) \(payload.readableBytes)B #\(sum)\(time)"
            case let .close(code, reason): return "\(direction) close \(code.map(String.init) ?? "-") \(reason)\(time)"
            case let .error(error): return "\(direction) error \(error.code)\(time)"
            case let .tcpClosed(kind): return "\(direction) tcpClosed \(kind)\(time)"
            case .ping: return "\(direction) ping\(time)"
            case .pong: return "\(direction) pong\(time)"
            }
        }
    }

    @Test func inOrderSessionDecodesBothDirections() throws {
        var capture = SyntheticCapture()
        Self.session(&capture)
        let connections = try Self.importFile(capture)
        try #require(connections.count == 1)
        let connection = connections[0]
        #expect(connection.kind == .webSocket)
        #expect(connection.client.description == "10.0.0.1:50000")
        #expect(connection.server.description == "10.0.0.2:4984")
        #expect(connection.request?.query == "client=test")
        #expect(connection.response?.status == 101)
        let summary = Self.summary(connection.events)
        #expect(summary.count == 6 * 2 + 4)
        #expect(summary.prefix(2) == ["C>S message 2 10B #\(Self.digest(0, 10))", "S>C message 2 11B #\(Self.digest(100, 11))"])
        #expect(summary.suffix(4) == ["C>S close 1000 ", "S>C close 1000 ", "C>S tcpClosed fin", "S>C tcpClosed fin"])
        // Nanosecond timestamps survive: packets are 1 µs apart from a whole second.
        #expect(connection.events[0].time.nanoseconds % 1_000 == 0)
        #expect(connection.events[0].time.seconds == 1_800_000_000)
    }

    static func digest(_ index: Int, _ length: Int) -> Int {
        WebSocketBytes.payload(index, length: length).reduce(0) { ($0 &* 31) &+ Int($1) }
    }

    /// Reorders data packets within small windows and repeats some, keeping each packet's time.
    static func shuffled(_ capture: SyntheticCapture, seed: UInt64, retime: Bool) -> SyntheticCapture {
        var generator = SeededGenerator(seed: seed)
        var packets = Array(capture.packets.dropFirst(3))
        var start = 0
        while start < packets.count {
            let end = min(packets.count, start + 8)
            packets[start..<end].shuffle(using: &generator)
            start = end
        }
        for _ in 0..<(packets.count / 8) {
            let copy = packets[Int.random(in: 0..<packets.count, using: &generator)]
            packets.insert(copy, at: Int.random(in: 0...packets.count, using: &generator))
        }
        var result = capture
        result.packets = Array(capture.packets.prefix(3)) + packets
        if retime {
            for index in result.packets.indices {
                result.packets[index].time = CaptureTimestamp(seconds: 1_900_000_000, nanoseconds: UInt32(index) * 10)
            }
        }
        return result
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func shuffledAndDuplicatedSegmentsKeepTheTimeline(seed: UInt64) throws {
        var capture = SyntheticCapture()
        Self.session(&capture)
        let expected = Self.summary(try Self.importFile(capture)[0].events, withTime: true)
        let connections = try Self.importFile(Self.shuffled(capture, seed: seed, retime: false))
        try #require(connections.count == 1)
        // Every message is complete when its last segment was captured, wherever the file puts it.
        #expect(Self.summary(connections[0].events, withTime: true) == expected)
    }

    @Test(arguments: [5, 6] as [UInt64])
    func shuffledSegmentsWithFileOrderTimesKeepEachDirection(seed: UInt64) throws {
        var capture = SyntheticCapture()
        Self.session(&capture)
        let expected = try Self.importFile(capture)[0]
        let connection = try #require(try Self.importFile(Self.shuffled(capture, seed: seed, retime: true)).first)
        for direction in CaptureDirection.allCases {
            #expect(Self.summary(connection.events(direction)) == Self.summary(expected.events(direction)))
        }
        let keys = connection.events.map { ($0.time, $0.packetIndex) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func sequenceNumbersWrapAroundMidMessage() throws {
        var capture = SyntheticCapture()
        capture.clientSequence = 0xFFFF_F000
        capture.serverSequence = 0xFFFF_FFFF
        Self.session(&capture, exchanges: 4)
        let connection = try #require(try Self.importFile(capture).first)
        let messages = connection.events.filter { if case .message = $0.kind { true } else { false } }
        #expect(messages.count == 8)
        #expect(!Self.summary(connection.events).contains { $0.contains("error") })
    }

    @Test func lostSegmentStopsOnlyItsDirection() throws {
        var capture = SyntheticCapture()
        Self.session(&capture, exchanges: 4, segmentSize: 1000)
        // Drop a server segment in the middle of the 70,001-byte reply.
        let serverData = capture.packets.indices.filter {
            capture.packets[$0].frame[26...29].elementsEqual([10, 0, 0, 2]) && capture.packets[$0].payloadCount == 1000
        }
        capture.packets.remove(at: serverData[serverData.count / 2])
        let connection = try #require(try Self.importFile(capture).first)
        let server = Self.summary(connection.events(.serverToClient))
        #expect(server.suffix(2) == ["S>C error missingBytes", "S>C tcpClosed fin"])
        #expect(server.filter { $0.contains("message") }.count == 3)
        let client = Self.summary(connection.events(.clientToServer))
        #expect(client.filter { $0.contains("message") }.count == 4)
        #expect(client.suffix(2) == ["C>S close 1000 ", "C>S tcpClosed fin"])
    }

    @Test func reusedPortsAfterFINStartANewConnection() throws {
        var capture = SyntheticCapture()
        Self.session(&capture, exchanges: 1)
        capture.clientSequence = 77_777
        capture.serverSequence = 123
        Self.session(&capture, exchanges: 2)
        let connections = try Self.importFile(capture)
        #expect(connections.map(\.index) == [0, 1])
        #expect(connections.map { Self.summary($0.events).filter { $0.contains("message") }.count } == [2, 4])
        #expect(connections[0].firstPacketIndex == 0)
        #expect(connections.allSatisfy { $0.kind == .webSocket && $0.client.port == 50_000 })
    }

    @Test func captureStartingMidConnectionFindsTheClientByItsRequest() throws {
        var capture = SyntheticCapture()
        capture.clientPort = 80          // a port-number guess would get the roles backwards
        capture.serverPort = 40_000
        Self.session(&capture, exchanges: 2, handshake: false)
        let connection = try #require(try Self.importFile(capture).first)
        #expect(connection.roleEvidence == .httpRequest)
        #expect(connection.client.port == 80)
        #expect(connection.kind == .webSocket)
        #expect(Self.summary(connection.events).filter { $0.contains("message") }.count == 4)
    }

    @Test func refusedUpgradeKeepsTheResponseAndBody() throws {
        var capture = SyntheticCapture()
        capture.handshake()
        capture.send(WebSocketBytes.upgradeRequest, from: .client)
        capture.send("HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 38\r\n\r\n", from: .server)
        capture.send("I only speak BLIP_3+CBMobile_4 protocols", from: .server)
        capture.close(from: .server)
        capture.close(from: .client, flags: SyntheticCapture.rst)
        let connection = try #require(try Self.importFile(capture).first)
        #expect(connection.kind == .http)
        #expect(connection.response?.status == 500)
        #expect(connection.responseBody.map { String(buffer: $0) } == "I only speak BLIP_3+CBMobile_4 protoco")
        #expect(Self.summary(connection.events) == ["S>C tcpClosed fin", "C>S tcpClosed rst"])
    }

    @Test func otherProtocolsAreMarkedAndConnectionsWithoutDataDropped() throws {
        var capture = SyntheticCapture()
        capture.handshake()
        capture.send([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5], from: .client)  // a TLS ClientHello start
        capture.clientPort = 50_001
        capture.handshake()                  // a second connection that never carries data
        capture.close(from: .server, flags: SyntheticCapture.rst)
        let connections = try Self.importFile(capture)
        try #require(connections.count == 1)
        #expect(connections[0].kind == .other)
        #expect(connections[0].clientToServerBytes == 10)
        #expect(connections[0].events.isEmpty)
    }

    @Test func messageLimitReportsAnErrorAndTheOtherSideGoesOn() throws {
        var capture = SyntheticCapture()
        Self.session(&capture, exchanges: 4)
        let limits = CaptureLimits(maxWebSocketMessageBytes: 70_000)  // the server's 70,001-byte reply is over
        let connection = try #require(try Self.importFile(capture, limits: limits).first)
        let server = Self.summary(connection.events(.serverToClient))
        #expect(server.suffix(2) == ["S>C error webSocketMessageTooLarge", "S>C tcpClosed fin"])
        #expect(Self.summary(connection.events(.clientToServer)).filter { $0.contains("message") }.count == 4)
    }

    @Test func unreadableFilesThrow() throws {
        let missing = #expect(throws: CaptureError.self) { try importConnections(fromPcapAt: "/nonexistent/x.pcap") }
        #expect(missing?.code == .pcapOpenFailed)
        var file = SyntheticCapture().pcapFile()
        file[20] = 147  // LINKTYPE_USER0
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-test-\(UUID().uuidString).pcap")
        try Data(file).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let unsupported = #expect(throws: CaptureError.self) { try importConnections(fromPcapAt: url.path) }
        #expect(unsupported?.code == .unsupportedLinkType)
    }

    @Test func packetsInMemoryAndVLANTags() {
        var capture = SyntheticCapture()
        capture.vlanTag = 42
        Self.session(&capture, exchanges: 2)
        let result = CaptureImporter().importCapture(packets: capture.pcapPackets)
        #expect(result.packetCount == capture.packets.count)
        #expect(result.connections.first?.kind == .webSocket)
        #expect(result.connections.first.map { Self.summary($0.events).count } == 8)
    }
}
