@testable import Capture
import NIOCore
import Testing
import WebSocketWire

/// Random and mangled input must give errors or skips, never a crash, and whatever comes out
/// must still keep the decoders' promises (payloads inside the packet, limits, a stop after an error).
@Suite struct RobustnessTests {
    static func randomBytes(_ count: Int, _ generator: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Whether `part` occurs in `whole` as a contiguous run.
    static func contains(_ whole: [UInt8], _ part: [UInt8]) -> Bool {
        guard part.count <= whole.count else { return false }
        if part.isEmpty { return true }
        return (0...(whole.count - part.count)).contains { whole[$0..<($0 + part.count)].elementsEqual(part) }
    }

    @Test func packetDecoderSurvivesGarbage() {
        var generator = SeededGenerator(seed: 7)
        let types: [PcapLinkType] = [.ethernet, .linuxSLL, .linuxSLL2, .null, .loop, .raw, .linktypeRaw]
        let valid = PacketDecoderTests.mac + [0x08, 0x00] + PacketDecoderTests.ipv4(PacketDecoderTests.tcp)
        guard case .tcp(let intact) = PacketDecoder.decode(PcapPacket(index: 0, timestamp: .zero, linkType: .ethernet,
                                                                      bytes: valid, originalLength: valid.count)) else {
            Issue.record("the unmangled frame does not decode")
            return
        }
        #expect(String(buffer: intact.payload) == "hello")
        var segments = 0, skips: Set<PacketDecoder.SkipReason> = []
        for round in 0..<3_000 {
            var bytes = round % 2 == 0 ? Self.randomBytes(Int.random(in: 0..<80, using: &generator), &generator) : valid
            if round % 2 == 1 {  // a valid frame with a few bytes changed and maybe cut short
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            }
            for type in types {
                switch PacketDecoder.decode(PcapPacket(index: round, timestamp: .zero, linkType: type, bytes: bytes, originalLength: 100)) {
                case .tcp(let segment):
                    segments += 1
                    let payload = Array(segment.payload.readableBytesView)
                    // At least an IPv4 and a TCP header come before the payload, which is the packet's own bytes.
                    #expect(payload.count <= bytes.count - 40, "round \(round), \(type)")
                    #expect(Self.contains(bytes, payload), "round \(round), \(type)")
                    #expect(segment.packetIndex == round)
                case .skipped(let reason):
                    skips.insert(reason)
                }
            }
        }
        // Both ways out were taken: the mangled frames still decode often, garbage is skipped.
        #expect(segments > 100)
        #expect(skips.isSuperset(of: [.truncated, .notIP, .notTCP]), "\(skips)")
    }

    /// Checks what a WebSocket parser emitted: messages within the limit, nothing after an error.
    static func checkOutputs(_ outputs: [WebSocketMessageParser.Output], limit: Int) -> Bool {
        var stopped = false
        for output in outputs {
            if stopped { return false }
            switch output {
            case .message(_, let payload): if payload.readableBytes > limit { return false }
            case .error: stopped = true
            default: break
            }
        }
        return true
    }

    @Test func parsersSurviveGarbage() {
        var generator = SeededGenerator(seed: 11)
        let frames = (0..<6).flatMap { index in
            WebSocketFrameWriter.frame(opcode: 2, payload: Array(repeating: UInt8(index), count: 150 * index),
                                       mask: WebSocketMaskingKey.deterministic(index: UInt64(index)))
        }
        var messages = 0, errors = 0
        for round in 0..<2_000 {
            var bytes = Self.randomBytes(Int.random(in: 0..<200, using: &generator), &generator)
            if round % 2 == 1 {  // client frames (one of them over the limit) with a few bytes changed
                bytes = frames
                for _ in 0..<2 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            }
            for sender in [WebSocketMessageParser.Sender.client, .server] {
                var parser = WebSocketMessageParser(sender: sender, maxMessageBytes: 1_000)
                let parsed = parser.parse(ByteBuffer(bytes: bytes))
                let stoppedEarly = parsed.contains { if case .error = $0 { true } else { false } }
                let finished = parser.finish()
                #expect(Self.checkOutputs(parsed + finished, limit: 1_000), "round \(round)")
                if stoppedEarly { #expect(finished.isEmpty, "a stopped parser says nothing more") }
                for output in parsed + finished {
                    if case .message = output { messages += 1 }
                    if case .error = output { errors += 1 }
                }
            }
            do {
                var request = HTTPUpgradeParser(maxHeadBytes: 100)
                if let (head, _) = try request.parseRequest(appending: ByteBuffer(bytes: Array("GET / HTTP/1.1\r\n".utf8) + bytes)) {
                    #expect(head.method == "GET" && head.target == "/")
                }
            } catch {
                #expect(error is CaptureError, "\(error)")
            }
            do {
                var response = HTTPUpgradeParser(maxHeadBytes: 100)
                if let (head, _) = try response.parseResponse(appending: ByteBuffer(bytes: Array("HTTP/1.1 ".utf8) + bytes + [10, 10])) {
                    #expect((100...999).contains(head.status))
                }
            } catch {
                #expect(error is CaptureError, "\(error)")
            }
        }
        #expect(messages > 100 && errors > 100, "mangled frames give messages and errors: \(messages), \(errors)")
    }

    @Test func reassemblerSurvivesRandomSegments() {
        var generator = SeededGenerator(seed: 13)
        var total = 0
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
            total += delivered
        }
        #expect(total > 0, "some of the random segments made a stream")
    }
}
