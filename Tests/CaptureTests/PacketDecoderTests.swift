@testable import Capture
import NIOCore
import Testing

@Suite struct PacketDecoderTests {
    static let tcp: [UInt8] = bigEndian(UInt16(50_000)) + bigEndian(UInt16(4984)) + bigEndian(UInt32(7))
        + bigEndian(UInt32(9)) + [0x50, 0x18, 0xFF, 0xFF, 0, 0, 0, 0] + Array("hello".utf8)

    static func ipv4(_ payload: [UInt8], protocol number: UInt8 = 6, fragment: UInt16 = 0x4000) -> [UInt8] {
        [0x45, 0] + bigEndian(UInt16(20 + payload.count)) + [0, 1] + bigEndian(fragment) + [64, number, 0, 0]
            + [192, 168, 1, 10] + [192, 168, 1, 20] + payload
    }

    static func ipv6(_ payload: [UInt8], hopByHop: Bool = false) -> [UInt8] {
        let options: [UInt8] = hopByHop ? [6, 0, 1, 4, 0, 0, 0, 0] : []
        let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
        return [0x60, 0, 0, 0] + bigEndian(UInt16(options.count + payload.count)) + [hopByHop ? 0 : 6, 64]
            + [0xFE, 0x80] + Array(repeating: 0, count: 12) + [0, 0x2A] + loopback + options + payload
    }

    static func decode(_ bytes: [UInt8], _ linkType: PcapLinkType) -> PacketDecoder.Outcome {
        PacketDecoder.decode(PcapPacket(index: 4, timestamp: .zero, linkType: linkType, bytes: bytes, originalLength: bytes.count))
    }

    static func segment(_ outcome: PacketDecoder.Outcome) -> TCPSegment? {
        guard case .tcp(let segment) = outcome else { return nil }
        return segment
    }

    static let mac: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]

    @Test func ethernetWithStackedVLANTagsAndPadding() throws {
        let frame = Self.mac + [0x88, 0xA8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00] + Self.ipv4(Self.tcp) + [0, 0, 0, 0]
        let segment = try #require(Self.segment(Self.decode(frame, .ethernet)))
        #expect(segment.source.description == "192.168.1.10:50000")
        #expect(segment.destination.description == "192.168.1.20:4984")
        #expect(segment.sequenceNumber == 7)
        #expect(segment.acknowledgmentNumber == 9)
        #expect(segment.flags == [.ack, .psh])
        #expect(String(buffer: segment.payload) == "hello")
        #expect(segment.packetIndex == 4)
    }

    @Test func linuxCookedV1AndV2() throws {
        let v1 = [0, 0, 0, 1, 0, 6] + Array(repeating: 0, count: 8) + [0x08, 0x00] + Self.ipv4(Self.tcp)
        #expect(Self.segment(Self.decode(v1, .linuxSLL))?.destination.port == 4984)
        let v2 = [0x86, 0xDD, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6] + Array(repeating: 0, count: 8) + Self.ipv6(Self.tcp)
        let segment = try #require(Self.segment(Self.decode(v2, .linuxSLL2)))
        #expect(segment.source.description == "[fe80::2a]:50000")
        #expect(segment.destination.address == "::1")
    }

    @Test func loopbackAndRawIP() {
        #expect(Self.segment(Self.decode([2, 0, 0, 0] + Self.ipv4(Self.tcp), .null)) != nil)
        #expect(Self.segment(Self.decode([0, 0, 0, 30] + Self.ipv6(Self.tcp), .loop)) != nil)
        #expect(Self.segment(Self.decode(Self.ipv4(Self.tcp), .linktypeRaw)) != nil)
        #expect(Self.segment(Self.decode(Self.ipv6(Self.tcp, hopByHop: true), .raw)).map { String(buffer: $0.payload) } == "hello")
    }

    @Test func skipsWhatIsNotWholeTCP() {
        func reason(_ outcome: PacketDecoder.Outcome) -> PacketDecoder.SkipReason? {
            guard case .skipped(let reason) = outcome else { return nil }
            return reason
        }
        #expect(reason(Self.decode(Self.ipv4(Self.tcp, fragment: 0x2000), .raw)) == .ipFragment)  // MF
        #expect(reason(Self.decode(Self.ipv4(Self.tcp, fragment: 0x0010), .raw)) == .ipFragment)  // offset
        #expect(reason(Self.decode(Self.ipv4(Self.tcp, protocol: 17), .raw)) == .notTCP)
        #expect(reason(Self.decode(Self.mac + [0x08, 0x06, 0, 1], .ethernet)) == .notIP)
        #expect(reason(Self.decode(Array(Self.ipv4(Self.tcp).prefix(30)), .raw)) == .truncated)
        #expect(reason(Self.decode(Self.ipv4(Self.tcp), PcapLinkType(rawValue: 105))) == .unsupportedLinkType)
    }

    @Test func ipv6TextForm() {
        #expect(IPAddress(networkBytes: [UInt8](repeating: 0, count: 16)).description == "::")
        #expect(IPAddress(networkBytes: [0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]).description == "2001:db8::1:0:0:1")
        #expect(IPAddress(networkBytes: [0x20, 0x01, 0x0D, 0xB8, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]).description == "2001:db8:1:1:1:1:1:1")
        #expect(IPAddress(networkBytes: [0x20, 0x01, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]).description == "2001:0:1:1:1:1:1:1")
        #expect(IPAddress(networkBytes: [127, 0, 0, 1]).description == "127.0.0.1")
    }
}
