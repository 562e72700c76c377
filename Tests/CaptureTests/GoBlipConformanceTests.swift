import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing

/// The capture between two go-blip peers (../shared/vectors), decoded end to end: pcapng →
/// TCP → WebSocket → every BLIP frame, checksum, inflate and message.
@Suite("Conformance: a real go-blip session")
struct GoBlipConformanceTests {
    static func fixture(_ name: String, _ type: String) throws -> String {
        try #require(Bundle.module.path(forResource: name, ofType: type, inDirectory: "Fixtures"))
    }

    static func connection() throws -> CapturedConnection {
        let connections = try importConnections(fromPcapAt: fixture("goblip-session", "pcap"))
        return try #require(connections.first { $0.kind == .webSocket })
    }

    struct Tally: Equatable, CustomStringConvertible {
        var counts: [String: Int] = [:]
        mutating func add(_ direction: BLIPDirection, _ what: String) { counts["\(direction):\(what)", default: 0] += 1 }
        var description: String { counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    @Test("all 379 frames decode: every checksum verified, every compressed frame inflated, every message whole")
    func everyFrameDecodes() throws {
        let connection = try Self.connection()
        let decoder = ConnectionDecoder()
        var frames = 0
        var compressedFrames = 0
        var tally = Tally()
        var messages: [BLIPDirection: [MessageNumber: BLIPMessage]] = [:]
        var replies: [(BLIPDirection, BLIPMessage)] = []
        var closes: [UInt16?] = []
        for event in connection.events {
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            switch event.kind {
            case .message(let opcode, let payload):
                #expect(opcode == 0x2, "BLIP frames travel as binary messages")
                frames += 1
                let decoded = try decoder.receive(payload, from: direction)
                if decoded.flags.isCompressed { compressedFrames += 1 }
                switch decoded.outcome {
                case .ack(let ack): tally.add(direction, ack.type.description)
                case .ignored(let error): Issue.record("frame ignored: \(error)")
                case .data:
                    guard let message = decoded.message else { continue }
                    tally.add(direction, message.type.description)
                    if message.type == .request { messages[direction, default: [:]][message.number] = message }
                    else { replies.append((direction, message)) }
                }
            case .close(let code, _):
                closes.append(code)
            case .error(let error):
                Issue.record("capture error: \(error)")
            default:
                break
            }
        }
        #expect(frames == 379)
        #expect(compressedFrames > 0)
        #expect(tally.counts == [
            "client:MSG": 17, "client:RPY": 8, "server:MSG": 8, "server:RPY": 14, "server:ERR": 1,
            "server:ACKMSG": 34, "client:ACKRPY": 34, "client:ACKMSG": 1,
        ], "\(tally)")
        #expect(closes == [1000, 1000])
        #expect(decoder.decoder(for: .clientToServer).messagesInProgress == 0)
        #expect(decoder.decoder(for: .serverToClient).messagesInProgress == 0)

        // Each echo reply carries its request's body; the `fail` request got an HTTP 404 ERR.
        var echoes = 0
        for (direction, reply) in replies {
            let request = try #require(messages[direction.reversed]?[reply.number], "reply #\(reply.number) has a request")
            if request.profile == "echo" {
                #expect(reply.body == request.body, "echo #\(reply.number)")
                echoes += 1
            }
            if reply.type == .error {
                #expect(request.profile == "fail")
                #expect(reply.properties["Error-Domain"] == "HTTP" && reply.properties["Error-Code"] == "404")
            }
        }
        #expect(echoes > 0)
        let largest = messages.values.flatMap(\.values).map(\.body.readableBytes).max() ?? 0
        #expect(largest >= 1 << 20, "the two 1 MiB echoes are reassembled whole")
    }

    @Test("frame headers, checksums and ACK counts match Wireshark's decode of the same capture")
    func matchesTshark() throws {
        let connection = try Self.connection()
        // Per sending port: the frame headers, the checksums of data frames, the ACK counts.
        var ours: [String: [[String]]] = [:]
        for event in connection.events {
            guard case .message(_, let payload) = event.kind else { continue }
            let frame = try BLIPFrame.parse(payload)
            let port = "\(event.direction == .clientToServer ? connection.client.port : connection.server.port)"
            var columns = ours[port] ?? [[], [], []]
            columns[0].append("#\(frame.number) f=\(frame.flags.rawValue & 0xF8)")
            if frame.flags.type?.isAck == true { columns[2].append("\(frame.ackedBytes)") }
            else { columns[1].append("\(frame.checksum)") }
            ours[port] = columns
        }
        var theirs: [String: [[String]]] = [:]
        let table = try String(contentsOfFile: Self.fixture("goblip-session.tshark", "tsv"), encoding: .utf8)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let numbers = fields[4].split(separator: ",")
            let flags = fields[5].split(separator: ",").map { Int($0.dropFirst(2), radix: 16)! }
            var columns = theirs[fields[1]] ?? [[], [], []]
            for (number, flag) in zip(numbers, flags) { columns[0].append("#\(number) f=\(flag & 0xF8)") }
            columns[1] += fields[9].split(separator: ",").map(String.init)
            columns[2] += fields[8].split(separator: ",").map(String.init)
            theirs[fields[1]] = columns
        }
        #expect(ours.keys.sorted() == theirs.keys.sorted())
        for port in theirs.keys {
            #expect(ours[port]?[0] == theirs[port]?[0], "frame headers from port \(port)")
            #expect(ours[port]?[1] == theirs[port]?[1], "checksums from port \(port)")
            #expect(ours[port]?[2] == theirs[port]?[2], "ACK counts from port \(port)")
        }
        #expect(ours.values.map { $0[0].count }.reduce(0, +) == 379)
    }
}
