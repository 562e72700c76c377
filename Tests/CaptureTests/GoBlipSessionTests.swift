import Capture
import Foundation
import NIOCore
import Testing

/// The independent reference capture (see /work/shared/vectors/README.md): one go-blip session.
@Suite struct GoBlipSessionTests {
    static func fixturePath() throws -> String {
        try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
    }

    @Test func findsOneWebSocketConnectionWithItsHandshake() throws {
        let result = try CaptureImporter().importCapture(fromPcapAt: Self.fixturePath())
        #expect(result.packetCount == 1014)
        #expect(result.skippedPackets.isEmpty)
        try #require(result.connections.count == 1)
        let connection = result.connections[0]
        #expect(connection.index == 0)
        #expect(connection.kind == .webSocket)
        #expect(connection.roleEvidence == .syn)
        #expect(connection.client.port == 46014)
        #expect(connection.server.port == 48984)
        #expect(connection.client.address == "127.0.0.1")
        let request = try #require(connection.request)
        #expect(request.method == "GET")
        #expect(request.target == "/db/_blipsync")
        #expect(request.path == "/db/_blipsync")
        #expect(request.headers["sec-websocket-protocol"] == "BLIP_3+CBMobile_3")
        #expect(request.isWebSocketUpgrade)
        let response = try #require(connection.response)
        #expect(response.status == 101)
        #expect(response.reason == "Switching Protocols")
        #expect(response.headers["Sec-WebSocket-Protocol"] == "BLIP_3+CBMobile_3")
        #expect(response.headers["Sec-WebSocket-Extensions"] == nil)
    }

    /// Per-direction counts from `tshark -r goblip-session.pcap -Y websocket`: the client sent 188
    /// binary messages and the server 191, 379 in all: one BLIP frame each.
    @Test func countsBinaryMessagesPerDirection() throws {
        let connection = try #require(try importConnections(fromPcapAt: Self.fixturePath()).first)
        var binary: [CaptureDirection: Int] = [:]
        var other: [String] = []
        for event in connection.events {
            switch event.kind {
            case .message(opcode: 2, _): binary[event.direction, default: 0] += 1
            case .close, .tcpClosed: break
            default: other.append("\(event.direction) \(event.kind)")
            }
        }
        #expect(binary[.clientToServer] == 188)
        #expect(binary[.serverToClient] == 191)
        #expect(other.isEmpty)
    }

    @Test func bothSidesCloseWith1000ThenFIN() throws {
        let connection = try #require(try importConnections(fromPcapAt: Self.fixturePath()).first)
        for direction in CaptureDirection.allCases {
            let tail = connection.events(direction).suffix(2).map(\.kind)
            guard tail.count == 2, case let .close(code, _) = tail.first!, case let .tcpClosed(how) = tail.last! else {
                Issue.record("\(direction) does not end with close + tcpClosed: \(tail)")
                continue
            }
            #expect(code == 1000)
            #expect(how == .fin)
        }
    }

    @Test func eventsAreOrderedByTimeThenPacket() throws {
        let connection = try #require(try importConnections(fromPcapAt: Self.fixturePath()).first)
        let keys = connection.events.map { ($0.time, $0.packetIndex) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(connection.events.first?.timestamp ?? 0 > 1_700_000_000)
    }
}
