/// One Ethernet frame made up for an exported capture, with its capture time.
public struct SynthesizedPacket: Sendable {
    public var time: CaptureTimestamp
    /// Ethernet II header, IPv4 header, TCP header, payload.
    public var bytes: [UInt8]
}

/// Makes up the Ethernet/IPv4/TCP packets of one TCP connection carrying given bytes: the
/// three-way handshake, data segments of at most ``mss`` bytes with the receiver's ACK after each
/// send, and the FIN exchange; sequence and acknowledgment numbers follow the bytes exactly, and
/// IPv4 header and TCP checksums are computed, so Wireshark's TCP analysis finds nothing wrong.
///
/// - IPv6 endpoints are replaced by IPv4 addresses in 10.66.6.0/24 (the export is for reading,
///   not for addressing).
/// - Times never go backwards within the connection.
/// - No retransmissions, window updates or options (no MSS option, no SACK).
public struct TCPStreamSynthesizer: Sendable {
    public enum Side: Sendable { case client, server }

    public let client: Endpoint
    public let server: Endpoint
    public let mss: Int
    private var clientNext: UInt32
    private var serverNext: UInt32
    private var ipIdentification: UInt16 = 0
    private var lastTime = CaptureTimestamp.zero
    private let clientMAC: [UInt8] = [0x02, 0x42, 0x4C, 0x00, 0x00, 0x01]
    private let serverMAC: [UInt8] = [0x02, 0x42, 0x4C, 0x00, 0x00, 0x02]

    /// - Parameter seed: varies the initial sequence numbers between connections of one export.
    public init(client: Endpoint, server: Endpoint, mss: Int = 1460, seed: UInt32 = 0) {
        self.client = Self.ipv4(client, fallbackHost: 1)
        self.server = Self.ipv4(server, fallbackHost: 2)
        self.mss = mss
        clientNext = 0x1000_0000 &+ seed &* 0x0101_0000
        serverNext = 0x7000_0000 &+ seed &* 0x0101_0000
    }

    private static func ipv4(_ endpoint: Endpoint, fallbackHost: UInt32) -> Endpoint {
        if case .v4 = endpoint.ip { return endpoint }
        return Endpoint(ip: .v4(0x0A42_0600 | fallbackHost), port: endpoint.port)
    }

    /// SYN, SYN-ACK, ACK.
    public mutating func open(at time: CaptureTimestamp) -> [SynthesizedPacket] {
        var packets = [packet(from: .client, flags: Flags.syn, payload: [], at: time, ack: false)]
        clientNext &+= 1
        packets.append(packet(from: .server, flags: Flags.syn | Flags.ack, payload: [], at: time))
        serverNext &+= 1
        packets.append(packet(from: .client, flags: Flags.ack, payload: [], at: time))
        return packets
    }

    /// `bytes` from `side` in segments of at most ``mss`` bytes (PSH on the last), then the other
    /// side's ACK.
    public mutating func send(_ bytes: [UInt8], from side: Side, at time: CaptureTimestamp) -> [SynthesizedPacket] {
        guard !bytes.isEmpty else { return [] }
        var packets: [SynthesizedPacket] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + mss)
            let flags = end == bytes.count ? Flags.ack | Flags.psh : Flags.ack
            packets.append(packet(from: side, flags: flags, payload: bytes[offset..<end], at: time))
            advance(side, by: end - offset)
            offset = end
        }
        packets.append(packet(from: side == .client ? .server : .client, flags: Flags.ack, payload: [], at: time))
        return packets
    }

    /// FIN-ACK from `side`, FIN-ACK from the other, and the last ACK.
    public mutating func close(from side: Side, at time: CaptureTimestamp) -> [SynthesizedPacket] {
        let other: Side = side == .client ? .server : .client
        var packets = [packet(from: side, flags: Flags.fin | Flags.ack, payload: [], at: time)]
        advance(side, by: 1)
        packets.append(packet(from: other, flags: Flags.fin | Flags.ack, payload: [], at: time))
        advance(other, by: 1)
        packets.append(packet(from: side, flags: Flags.ack, payload: [], at: time))
        return packets
    }

    private enum Flags {
        static let fin: UInt8 = 0x01, syn: UInt8 = 0x02, psh: UInt8 = 0x08, ack: UInt8 = 0x10
    }

    private mutating func advance(_ side: Side, by count: Int) {
        if side == .client { clientNext &+= UInt32(truncatingIfNeeded: count) } else { serverNext &+= UInt32(truncatingIfNeeded: count) }
    }

    private mutating func packet(
        from side: Side, flags: UInt8, payload: some Collection<UInt8>, at time: CaptureTimestamp, ack: Bool = true
    ) -> SynthesizedPacket {
        let (source, destination) = side == .client ? (client, server) : (server, client)
        let sequence = side == .client ? clientNext : serverNext
        let acknowledgment = ack ? (side == .client ? serverNext : clientNext) : 0
        lastTime = max(lastTime, time)
        ipIdentification &+= 1

        var tcp: [UInt8] = []
        tcp.reserveCapacity(20 + payload.count)
        tcp += Self.bytes(source.port) + Self.bytes(destination.port) + Self.bytes(sequence) + Self.bytes(acknowledgment)
        tcp += [0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]
        tcp.append(contentsOf: payload)
        let sourceIP = Self.bytes(Self.v4(source.ip)), destinationIP = Self.bytes(Self.v4(destination.ip))
        let pseudoHeader = sourceIP + destinationIP + [0, 6] + Self.bytes(UInt16(tcp.count))
        let tcpChecksum = Self.internetChecksum(pseudoHeader, tcp)
        tcp[16] = UInt8(tcpChecksum >> 8)
        tcp[17] = UInt8(tcpChecksum & 0xFF)

        var ip: [UInt8] = [0x45, 0] + Self.bytes(UInt16(20 + tcp.count)) + Self.bytes(ipIdentification)
        ip += [0x40, 0, 64, 6, 0, 0] + sourceIP + destinationIP
        let ipChecksum = Self.internetChecksum(ip, [])
        ip[10] = UInt8(ipChecksum >> 8)
        ip[11] = UInt8(ipChecksum & 0xFF)

        let (sourceMAC, destinationMAC) = side == .client ? (clientMAC, serverMAC) : (serverMAC, clientMAC)
        var frame = destinationMAC + sourceMAC + [0x08, 0x00]
        frame.reserveCapacity(14 + ip.count + tcp.count)
        frame += ip
        frame += tcp
        return SynthesizedPacket(time: lastTime, bytes: frame)
    }

    private static func v4(_ ip: IPAddress) -> UInt32 {
        if case .v4(let value) = ip { return value }
        return 0
    }

    private static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// RFC 1071: the ones' complement of the ones' complement sum of 16-bit words.
    static func internetChecksum(_ first: [UInt8], _ second: [UInt8]) -> UInt16 {
        var sum: UInt64 = 0
        func add(_ bytes: [UInt8], startingOdd: Bool) {
            bytes.withUnsafeBufferPointer { buffer in
                for (index, byte) in buffer.enumerated() {
                    sum &+= (index + (startingOdd ? 1 : 0)) % 2 == 0 ? UInt64(byte) << 8 : UInt64(byte)
                }
            }
        }
        add(first, startingOdd: false)
        add(second, startingOdd: first.count % 2 == 1)
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }
}
