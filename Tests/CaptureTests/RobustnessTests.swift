@testable import Capture
import NIOCore
import Testing

/// Random and mangled input must give errors or skips, never a crash.
@Suite struct RobustnessTests {
    static func randomBytes(_ count: Int, _ generator: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test func packetDecoderSurvivesGarbage() {
        var generator = SeededGenerator(seed: 7)
        let types: [PcapLinkType] = [.ethernet, .linuxSLL, .linuxSLL2, .null, .loop, .raw, .linktypeRaw]
        let valid = PacketDecoderTests.mac + [0x08, 0x00] + PacketDecoderTests.ipv4(PacketDecoderTests.tcp)
        for round in 0..<3_000 {
            var bytes = round % 2 == 0 ? Self.randomBytes(Int.random(in: 0..<80, using: &generator), &generator) : valid
            if round % 2 == 1 {  // a valid frame with a few bytes changed and maybe cut short
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            }
            for type in types {
                _ = PacketDecoder.decode(PcapPacket(index: 0, timestamp: .zero, linkType: type, bytes: bytes, originalLength: 100))
            }
        }
    }

    @Test func parsersSurviveGarbage() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<2_000 {
            let bytes = Self.randomBytes(Int.random(in: 0..<200, using: &generator), &generator)
            for sender in [WebSocketMessageParser.Sender.client, .server] {
                var parser = WebSocketMessageParser(sender: sender, maxMessageBytes: 1_000)
                _ = parser.parse(ByteBuffer(bytes: bytes))
                _ = parser.finish()
            }
            var request = HTTPUpgradeParser(maxHeadBytes: 100)
            _ = try? request.parseRequest(appending: ByteBuffer(bytes: Array("GET / HTTP/1.1\r\n".utf8) + bytes))
            var response = HTTPUpgradeParser(maxHeadBytes: 100)
            _ = try? response.parseResponse(appending: ByteBuffer(bytes: Array("HTTP/1.1 ".utf8) + bytes + [10, 10]))
        }
    }

    @Test func reassemblerSurvivesRandomSegments() {
        var generator = SeededGenerator(seed: 13)
        for _ in 0..<200 {
            var reassembler = TCPStreamReassembler(maxOutOfOrderBytes: 5_000)
            var delivered = 0
            for packet in 0..<50 {
                let sequence = UInt32.random(in: 0...3_000, using: &generator) &+ 0xFFFF_F800
                let payload = ByteBuffer(bytes: Self.randomBytes(Int.random(in: 0..<600, using: &generator), &generator))
                for output in reassembler.receive(
                    sequenceNumber: sequence, payload: payload, fin: packet == 49, timestamp: .zero, packetIndex: packet
                ) {
                    if case .bytes(let chunk) = output {
                        #expect(chunk.streamOffset == Int64(delivered))
                        delivered += chunk.bytes.readableBytes
                    }
                }
            }
            _ = reassembler.finish(timestamp: .zero, packetIndex: 50)
            #expect(Int64(delivered) == reassembler.deliveredBytes)
        }
    }
}
