import Capture
import Foundation

/// Builds a TCP conversation as Ethernet/IPv4/TCP packets and writes it as a classic pcap file
/// (nanosecond variant), so the whole import path can be tested from bytes on disk.
/// Checksums are left at zero: the importer does not verify them.
struct SyntheticCapture {
    enum Side { case client, server }

    struct Packet {
        var time: CaptureTimestamp
        var frame: [UInt8]
        var flags: UInt8
        var payloadCount: Int
    }

    var clientIP: [UInt8] = [10, 0, 0, 1]
    var serverIP: [UInt8] = [10, 0, 0, 2]
    var clientPort: UInt16 = 50_000
    var serverPort: UInt16 = 4984
    var clientSequence: UInt32 = 1_000
    var serverSequence: UInt32 = 9_000_000
    var vlanTag: UInt16?
    var packets: [Packet] = []
    /// The time given to the next packet; each packet advances it by `step`.
    var clock = CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: 0)
    var step: UInt32 = 1_000  // 1 µs

    static let syn: UInt8 = 0x02, ack: UInt8 = 0x10, fin: UInt8 = 0x01, rst: UInt8 = 0x04, psh: UInt8 = 0x08

    mutating func handshake() {
        append(from: .client, flags: Self.syn, sequence: clientSequence, payload: [])
        clientSequence &+= 1
        append(from: .server, flags: Self.syn | Self.ack, sequence: serverSequence, payload: [])
        serverSequence &+= 1
        append(from: .client, flags: Self.ack, sequence: clientSequence, payload: [])
    }

    /// Sends `bytes` in segments of at most `segmentSize` bytes.
    mutating func send(_ bytes: [UInt8], from side: Side, segmentSize: Int = 1460) {
        var offset = 0
        while offset < bytes.count {
            let piece = Array(bytes[offset..<min(bytes.count, offset + segmentSize)])
            let sequence = side == .client ? clientSequence : serverSequence
            append(from: side, flags: Self.ack | Self.psh, sequence: sequence, payload: piece)
            advance(side, by: piece.count)
            offset += piece.count
        }
    }

    mutating func send(_ text: String, from side: Side) { send(Array(text.utf8), from: side) }

    mutating func close(from side: Side, flags: UInt8 = SyntheticCapture.fin | SyntheticCapture.ack) {
        let sequence = side == .client ? clientSequence : serverSequence
        append(from: side, flags: flags, sequence: sequence, payload: [])
        if flags & Self.fin != 0 { advance(side, by: 1) }
    }

    private mutating func advance(_ side: Side, by count: Int) {
        if side == .client { clientSequence &+= UInt32(count) } else { serverSequence &+= UInt32(count) }
    }

    mutating func append(from side: Side, flags: UInt8, sequence: UInt32, payload: [UInt8]) {
        let acknowledgment = side == .client ? serverSequence : clientSequence
        let (sourceIP, destinationIP) = side == .client ? (clientIP, serverIP) : (serverIP, clientIP)
        let (sourcePort, destinationPort) = side == .client ? (clientPort, serverPort) : (serverPort, clientPort)
        var tcp = bigEndian(sourcePort) + bigEndian(destinationPort) + bigEndian(sequence) + bigEndian(acknowledgment)
        tcp += [0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0] + payload
        var ip: [UInt8] = [0x45, 0] + bigEndian(UInt16(20 + tcp.count)) + [0x12, 0x34, 0x40, 0, 64, 6, 0, 0]
        ip += sourceIP + destinationIP + tcp
        var frame: [UInt8] = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]
        if let vlanTag { frame += [0x81, 0x00] + bigEndian(vlanTag) }
        frame += [0x08, 0x00] + ip
        packets.append(Packet(time: clock, frame: frame, flags: flags, payloadCount: payload.count))
        clock = CaptureTimestamp(seconds: clock.seconds, nanoseconds: clock.nanoseconds + step)
    }

    /// The packets as `PcapPacket`s, in their current order.
    var pcapPackets: [PcapPacket] {
        packets.enumerated().map { index, packet in
            PcapPacket(index: index, timestamp: packet.time, linkType: .ethernet, bytes: packet.frame,
                       originalLength: packet.frame.count)
        }
    }

    /// Classic pcap, little-endian, nanosecond magic, link type Ethernet.
    func pcapFile() -> [UInt8] {
        var file = littleEndian(UInt32(0xA1B2_3C4D)) + littleEndian(UInt16(2)) + littleEndian(UInt16(4))
        file += littleEndian(UInt32(0)) + littleEndian(UInt32(0)) + littleEndian(UInt32(262_144)) + littleEndian(UInt32(1))
        for packet in packets {
            file += littleEndian(UInt32(packet.time.seconds)) + littleEndian(packet.time.nanoseconds)
            file += littleEndian(UInt32(packet.frame.count)) + littleEndian(UInt32(packet.frame.count))
            file += packet.frame
        }
        return file
    }

    /// Writes ``pcapFile()`` to a fresh temporary file and returns its path.
    func writeTemporaryFile() throws -> String {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-test-\(UUID().uuidString).pcap")
        try Data(pcapFile()).write(to: url)
        return url.path
    }
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

/// A small deterministic generator (SplitMix64), so shuffled tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
