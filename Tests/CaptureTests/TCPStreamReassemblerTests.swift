@testable import Capture
import NIOCore
import Testing

@Suite struct TCPStreamReassemblerTests {
    /// Feeds (sequence, bytes, time in µs) triples as packets 0, 1, 2, … and collects the result.
    struct Harness {
        var reassembler: TCPStreamReassembler
        var bytes: [UInt8] = []
        var chunks: [TCPStreamReassembler.Chunk] = []
        var gaps: [CaptureError] = []
        var packet = 0

        init(limit: Int = 1 << 20, isn: UInt32? = nil) {
            reassembler = TCPStreamReassembler(maxOutOfOrderBytes: limit)
            if let isn { feed(isn, [], micros: 0, syn: true) }
        }

        mutating func feed(_ sequence: UInt32, _ payload: [UInt8], micros: Int64 = 0, syn: Bool = false, fin: Bool = false) {
            var flags: TCPSegment.Flags = [.ack]
            if syn { flags.insert(.syn) }
            if fin { flags.insert(.fin) }
            let endpoint = Endpoint(ip: .v4(1), port: 1)
            let segment = TCPSegment(
                source: endpoint, destination: endpoint, sequenceNumber: sequence, flags: flags,
                payload: ByteBuffer(bytes: payload), timestamp: Self.time(micros), packetIndex: packet
            )
            packet += 1
            record(reassembler.receive(segment))
        }

        mutating func finish() { record(reassembler.finish(timestamp: Self.time(999_999), packetIndex: packet)) }

        private mutating func record(_ outputs: [TCPStreamReassembler.Output]) {
            for output in outputs {
                switch output {
                case .bytes(let chunk):
                    bytes += chunk.bytes.readableBytesView
                    chunks.append(chunk)
                case .gap(let error, _, _):
                    gaps.append(error)
                }
            }
        }

        static func time(_ micros: Int64) -> CaptureTimestamp {
            CaptureTimestamp(seconds: 100 + micros / 1_000_000, nanoseconds: UInt32(micros % 1_000_000) * 1_000)
        }
    }

    static let text = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
    static func piece(_ range: Range<Int>) -> [UInt8] { Array(text[range]) }

    @Test func inOrderSegmentsAfterSYN() {
        var h = Harness(isn: 41)
        h.feed(42, Self.piece(0..<10))
        h.feed(52, Self.piece(10..<20))
        h.finish()
        #expect(h.bytes == Self.piece(0..<20))
        #expect(h.chunks.map(\.streamOffset) == [0, 10])
        #expect(h.gaps.isEmpty)
    }

    @Test func outOfOrderSegmentsWaitForTheHole() {
        var h = Harness(isn: 41)
        h.feed(62, Self.piece(20..<30), micros: 1)
        h.feed(52, Self.piece(10..<20), micros: 2)
        #expect(h.bytes.isEmpty)
        h.feed(42, Self.piece(0..<10), micros: 3)
        h.finish()
        #expect(h.bytes == Self.piece(0..<30))
        // Everything became available with the third packet.
        #expect(h.chunks.allSatisfy { $0.packetIndex == 3 && $0.timestamp == Harness.time(3) })
        #expect(h.gaps.isEmpty)
    }

    @Test func retransmissionsAreDeliveredOnce() {
        var h = Harness(isn: 41)
        h.feed(42, Self.piece(0..<10))
        h.feed(42, Self.piece(0..<10))
        h.feed(52, Self.piece(10..<20))
        h.feed(42, Self.piece(0..<10))
        h.finish()
        #expect(h.bytes == Self.piece(0..<20))
        #expect(h.reassembler.duplicateSegments == 2)
    }

    @Test func overlappingSegmentsKeepTheFirstCopy() {
        var h = Harness(isn: 41)
        h.feed(52, Self.piece(10..<20))          // ahead of the hole
        h.feed(47, Array("XXXXX".utf8) + Self.piece(10..<25)) // overlaps the held segment, extends it
        h.feed(42, Self.piece(0..<8))            // fills part of the hole, overlaps the second
        h.finish()
        // Bytes 5..<10 were first captured as "XXXXX"; the later, different copy loses.
        #expect(h.bytes == Self.piece(0..<5) + Array("XXXXX".utf8) + Self.piece(10..<25))
    }

    @Test func timestampsOutOfFileOrderNeverGoBackwards() {
        var h = Harness(isn: 41)
        h.feed(52, Self.piece(10..<20), micros: 50) // captured later, filed first
        h.feed(42, Self.piece(0..<10), micros: 20)
        h.feed(62, Self.piece(20..<30), micros: 10)
        h.finish()
        #expect(h.bytes == Self.piece(0..<30))
        #expect(h.chunks.map(\.timestamp) == [Harness.time(20), Harness.time(50), Harness.time(50)])
    }

    @Test func sequenceNumbersWrapAround() {
        var h = Harness(isn: 0xFFFF_FFF9)  // first data byte at 0xFFFFFFFA
        h.feed(0x0000_0004, Self.piece(10..<20))
        h.feed(0xFFFF_FFFA, Self.piece(0..<10))
        h.feed(0x0000_000E, Self.piece(20..<30), fin: true)
        h.finish()
        #expect(h.bytes == Self.piece(0..<30))
        #expect(h.reassembler.finOffset == 30)
        #expect(h.gaps.isEmpty)
    }

    @Test func holeBeforeHeldBytesIsAGapAtTheEnd() throws {
        var h = Harness(isn: 41)
        h.feed(42, Self.piece(0..<10))
        h.feed(62, Self.piece(20..<30))
        h.finish()
        #expect(h.bytes == Self.piece(0..<10))
        let gap = try #require(h.gaps.first)
        #expect(gap.code == .missingBytes)
        #expect(gap.description.contains("10 bytes are missing"))
        #expect(gap.description.contains("at byte 10"))
    }

    @Test func missingBytesBeforeFINAreAGap() {
        var h = Harness(isn: 41)
        h.feed(42, Self.piece(0..<10))
        h.feed(62, [], fin: true)
        h.finish()
        #expect(h.gaps.map(\.code) == [.missingBytes])
    }

    @Test func outOfOrderLimitStopsTheDirection() {
        var h = Harness(limit: 15, isn: 41)
        h.feed(52, Self.piece(10..<20))
        #expect(h.gaps.isEmpty)
        h.feed(62, Self.piece(20..<30))
        #expect(h.gaps.map(\.code) == [.outOfOrderLimitExceeded])
        h.feed(42, Self.piece(0..<10))  // too late: the direction has stopped
        h.finish()
        #expect(h.bytes.isEmpty)
        #expect(h.gaps.count == 1)
        #expect(h.reassembler.hasFailed)
    }

    @Test func midStreamStartUsesTheFirstDataSegment() {
        var h = Harness()
        h.feed(5000, Self.piece(0..<10))
        h.feed(4990, Self.piece(0..<10))  // earlier bytes: taken as a retransmission
        h.feed(5010, Self.piece(10..<20))
        h.finish()
        #expect(h.bytes == Self.piece(0..<20))
        #expect(h.reassembler.sawSYN == false)
    }

    @Test func synCarryingDataStartsAtISNPlusOne() {
        var h = Harness()
        h.feed(99, Self.piece(0..<5), syn: true)
        h.feed(105, Self.piece(5..<10))
        h.finish()
        #expect(h.bytes == Self.piece(0..<10))
    }
}
