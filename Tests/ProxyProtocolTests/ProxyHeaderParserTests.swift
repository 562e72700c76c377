import ProxyProtocol
import Testing

/// The PROXY protocol parser without sockets: both versions, every family the relay takes,
/// TLVs skipped, the connection's own bytes left after the header wherever the reads are cut,
/// and each malformation refused with its kind at the byte that shows it.
@Suite struct ProxyHeaderParserTests {
    static let client = ProxyEndpoint(address: .ipv4(0xC000_0201), port: 56324)  // 192.0.2.1
    static let front = ProxyEndpoint(address: .ipv4(0xC633_6414), port: 443)  // 198.51.100.20
    static let client6 = ProxyEndpoint(address: ProxyAddress(bytes: [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [1])!,
                                       port: 40_000)
    static let front6 = ProxyEndpoint(address: ProxyAddress(bytes: [0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 1] + Array(repeating: 0, count: 7) + [0x20])!,
                                      port: 4994)
    static let request = Array("GET /db/_blipsync HTTP/1.1\r\nHost: relay\r\n\r\n".utf8)

    /// Feeds `reads` one at a time: the header, and the bytes after it (the rest of its read and
    /// every later read); nil for the header while it is incomplete.
    static func parse(_ reads: [[UInt8]], limits: ProxyProtocolLimits = ProxyProtocolLimits())
        throws(ProxyProtocolError) -> (header: ProxyHeader?, after: [UInt8]) {
        var parser = ProxyHeaderParser(limits: limits)
        var header: ProxyHeader?
        var after: [UInt8] = []
        for read in reads {
            guard header == nil else { after += read; continue }
            if case let .header(found, consumed) = try parser.parse(read) {
                header = found
                after += read[consumed...]
            }
        }
        return (header, after)
    }

    static func error(_ bytes: [UInt8], limits: ProxyProtocolLimits = ProxyProtocolLimits()) -> ProxyProtocolError? {
        do {
            _ = try parse([bytes], limits: limits)
            return nil
        } catch {
            return error
        }
    }

    static func line(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func version1TCP4AndTCP6() throws {
        let four = try Self.parse([Self.line("PROXY TCP4 192.0.2.1 198.51.100.20 56324 443\r\n") + Self.request])
        #expect(four.header == .proxied(source: Self.client, destination: Self.front))
        #expect(four.after == Self.request)
        let six = try Self.parse([Self.line("PROXY TCP6 2001:db8::1 2001:DB8:0:1::20 40000 4994\r\n") + Self.request])
        #expect(six.header == .proxied(source: Self.client6, destination: Self.front6))
        #expect(six.after == Self.request)
        #expect(Self.client6.description == "[2001:db8::1]:40000")
        #expect(Self.front.description == "198.51.100.20:443")
        // The longest addresses of both families, and IPv4-mapped IPv6 as inet_ntop writes it.
        let longest = try Self.parse([Self.line("PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ::ffff:10.0.0.1 65535 0\r\n")])
        guard case let .proxied(source, destination)? = longest.header else { Issue.record("no header"); return }
        #expect(source.address.bytes == Array(repeating: 0xFF, count: 16) && source.port == 65535)
        #expect(destination.address.bytes == Array(repeating: 0, count: 10) + [0xFF, 0xFF, 10, 0, 0, 1] && destination.port == 0)
        #expect(destination.address.description == "::ffff:a00:1")
    }

    @Test func version1UnknownIsUnspecifiedWhateverFollows() throws {
        #expect(try Self.parse([Self.line("PROXY UNKNOWN\r\n")]).header == .unspecified)
        let long = try Self.parse([Self.line("PROXY UNKNOWN ffff:f::f ffff:f::f 65535 65535\r\n") + Self.request])
        #expect(long.header == .unspecified)
        #expect(long.after == Self.request)
    }

    @Test func version2TCP4TCP6LocalAndUnspecified() throws {
        let four = ProxyHeader.proxied(source: Self.client, destination: Self.front)
        #expect(try Self.parse([four.version2Bytes() + Self.request]).header == four)
        #expect(four.version2Bytes().count == 16 + 12)
        let six = ProxyHeader.proxied(source: Self.client6, destination: Self.front6)
        #expect(six.version2Bytes().count == 16 + 36)
        let parsed = try Self.parse([six.version2Bytes() + Self.request])
        #expect(parsed.header == six && parsed.after == Self.request)
        #expect(try Self.parse([ProxyHeader.local.version2Bytes() + Self.request]) == (.local, Self.request))
        #expect(try Self.parse([ProxyHeader.unspecified.version2Bytes()]).header == .unspecified)
        // LOCAL ignores whatever address block it carries (HAProxy's health checks send LOCAL).
        var local = four.version2Bytes()
        local[12] = 0x20
        #expect(try Self.parse([local + Self.request]) == (.local, Self.request))
    }

    @Test func version2TLVsAreSkipped() throws {
        let header = ProxyHeader.proxied(source: Self.client, destination: Self.front)
        let tlvs: [(type: UInt8, value: [UInt8])] = [(0x05, Array(repeating: 0xAB, count: 128)), (0x01, Array("http/1.1".utf8)),
                                                      (0x04, []), (0x20, [0x01, 0, 0, 0, 0, 0x21, 0, 7] + Array("TLSv1.3".utf8))]
        let bytes = header.version2Bytes(tlvs: tlvs)
        let parsed = try Self.parse([bytes + Self.request])
        #expect(parsed.header == header)
        #expect(parsed.after == Self.request)
    }

    /// Every header, cut at every byte into two reads and fed one byte a read: the same header,
    /// and the same bytes after it.
    @Test func theSameHeaderWhereverTheReadsAreCut() throws {
        let headers: [(bytes: [UInt8], header: ProxyHeader)] = [
            (Self.line("PROXY TCP4 192.0.2.1 198.51.100.20 56324 443\r\n"), .proxied(source: Self.client, destination: Self.front)),
            (Self.line("PROXY TCP6 2001:db8::1 2001:db8:0:1::20 40000 4994\r\n"), .proxied(source: Self.client6, destination: Self.front6)),
            (Self.line("PROXY UNKNOWN\r\n"), .unspecified),
            (ProxyHeader.proxied(source: Self.client, destination: Self.front).version2Bytes(tlvs: [(0x02, Array("sg.example".utf8))]),
             .proxied(source: Self.client, destination: Self.front)),
            (ProxyHeader.proxied(source: Self.client6, destination: Self.front6).version2Bytes(), .proxied(source: Self.client6, destination: Self.front6)),
            (ProxyHeader.local.version2Bytes(), .local),
        ]
        for (bytes, header) in headers {
            let stream = bytes + Self.request
            for cut in 0...stream.count {
                let parsed = try Self.parse([Array(stream[..<cut]), Array(stream[cut...])])
                #expect(parsed.header == header, "cut at \(cut)")
                #expect(parsed.after == Self.request, "cut at \(cut)")
            }
            let byByte = try Self.parse(stream.map { [$0] })
            #expect(byByte.header == header && byByte.after == Self.request)
        }
    }

    @Test func theEncodingsRoundTrip() throws {
        for header in [ProxyHeader.proxied(source: Self.client, destination: Self.front),
                       .proxied(source: Self.client6, destination: Self.front6)] {
            #expect(try Self.parse([header.version1Bytes]).header == header)
            #expect(try Self.parse([header.version2Bytes()]).header == header)
        }
        #expect(ProxyHeader.local.version1Bytes == Self.line("PROXY UNKNOWN\r\n"))
    }

    @Test func aConnectionWithoutAHeaderIsRefusedAtItsFirstByte() {
        for start in ["GET /db/_blipsync HTTP/1.1\r\n", "POST / HTTP/1.1\r\n", "\u{16}\u{03}\u{01}", "\r\n\r\n\u{0}\r\nQUIT!"] {
            let error = Self.error(Self.line(start))
            #expect(error?.kind == .notProxyHeader, "\(start.debugDescription)")
        }
        // Refused before the rest arrives: the first byte that matches no start decides.
        var parser = ProxyHeaderParser()
        #expect(throws: ProxyProtocolError.self) { try parser.parse([0x47]) }  // "G"
        #expect(Self.error(Self.line("GET / HTTP/1.1\r\n"))?.description.contains("\"GET / HTTP/1.1") == true)
        #expect(Self.error([0x16, 0x03, 0x01, 0x02, 0x00])?.description.contains("0x1603010200") == true)
    }

    @Test(arguments: [
        "PROXY\tTCP4 192.0.2.1 198.51.100.20 1 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 1 2\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 1 2\rX",
        "PROXY TCP5 192.0.2.1 198.51.100.20 1 2\r\n",
        "PROXY UDP4 192.0.2.1 198.51.100.20 1 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 1\r\n",
        "PROXY TCP4 192.0.2.1  198.51.100.20 1 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 1 2 \r\n",
        "PROXY TCP4 192.0.2.01 198.51.100.20 1 2\r\n",
        "PROXY TCP4 192.0.2.256 198.51.100.20 1 2\r\n",
        "PROXY TCP4 192.0.2 198.51.100.20 1 2\r\n",
        "PROXY TCP4 2001:db8::1 198.51.100.20 1 2\r\n",
        "PROXY TCP6 192.0.2.1 2001:db8::1 1 2\r\n",
        "PROXY TCP6 2001:db8::1::2 2001:db8::1 1 2\r\n",
        "PROXY TCP6 2001:db8:1:2:3:4:5:6:7 2001:db8::1 1 2\r\n",
        "PROXY TCP6 2001:db8:1:2:3:4:5 2001:db8::1 1 2\r\n",
        "PROXY TCP6 2001:db8:12345::1 2001:db8::1 1 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 65536 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 01 2\r\n",
        "PROXY TCP4 192.0.2.1 198.51.100.20 -1 2\r\n",
        "PROXY \r\n",
    ])
    func malformedVersion1LinesAreRefused(line: String) {
        #expect(Self.error(Self.line(line))?.kind == .malformed, "\(line.debugDescription)")
    }

    @Test func aVersion1LineWithoutCRLFIn107BytesIsTooLong() throws {
        let longest = Self.line("PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n")
        #expect(longest.count == ProxyProtocolLimits.version1MaximumLineBytes)
        #expect(try Self.parse([longest]).header == .unspecified)
        let over = Self.line("PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 655350\r\n")
        #expect(Self.error(over)?.kind == .tooLong)
        // Refused at the 107th byte, not after waiting for more.
        var parser = ProxyHeaderParser()
        #expect(throws: ProxyProtocolError.self) { try parser.parse(Self.line("PROXY ") + Array(repeating: 0x41, count: 101)) }
    }

    @Test func malformedVersion2HeadersAreRefused() {
        let good = ProxyHeader.proxied(source: Self.client, destination: Self.front).version2Bytes()
        func with(_ index: Int, _ value: UInt8) -> [UInt8] {
            var bytes = good
            bytes[index] = value
            return bytes
        }
        #expect(Self.error(with(12, 0x11))?.kind == .malformed, "version 1 in a version 2 header")
        #expect(Self.error(with(12, 0x31))?.kind == .malformed, "version 3")
        #expect(Self.error(with(12, 0x22))?.kind == .malformed, "command 2")
        #expect(Self.error(with(13, 0x41))?.kind == .malformed, "family 4")
        #expect(Self.error(with(13, 0x13))?.kind == .malformed, "protocol 3")
        #expect(Self.error(with(15, 11))?.kind == .malformed, "IPv4 with 11 address bytes")
        let six = ProxyHeader.proxied(source: Self.client6, destination: Self.front6).version2Bytes()
        #expect(Self.error(Array(six[..<15]) + [12] + Array(six[16..<28]))?.kind == .malformed, "IPv6 with 12 address bytes")
        // A signature that breaks off is no header at all.
        #expect(Self.error(with(11, 0x0B))?.kind == .notProxyHeader)
        // Refused at the 13th byte.
        var parser = ProxyHeaderParser()
        #expect(throws: ProxyProtocolError.self) { try parser.parse(Array(good[..<12]) + [0x10]) }
    }

    @Test func udpAndUnixConnectionsAreUnsupported() {
        for family: UInt8 in [0x12, 0x22, 0x31, 0x32, 0x10, 0x01] {
            var bytes = ProxyHeader.proxied(source: Self.client6, destination: Self.front6).version2Bytes()
            bytes[13] = family
            if family >> 4 == 3 {  // UNIX: two 108-byte paths
                bytes = Array(bytes[..<14]) + [0, 216] + Array(repeating: 0x2F, count: 216)
            }
            #expect(Self.error(bytes)?.kind == .unsupported, "family 0x\(String(family, radix: 16))")
        }
        // LOCAL takes any family: its addresses are ignored.
        var local = ProxyHeader.proxied(source: Self.client, destination: Self.front).version2Bytes()
        local[12] = 0x20
        local[13] = 0x12
        #expect(Self.error(local) == nil)
    }

    @Test func aVersion2HeaderOverTheLimitIsRefusedFromItsLength() throws {
        let header = ProxyHeader.proxied(source: Self.client, destination: Self.front)
        let big = header.version2Bytes(tlvs: [(0xE0, Array(repeating: 0, count: 2000))])
        #expect(Self.error(big)?.kind == .tooLong)
        // From the length field alone: the 16 fixed bytes are enough to refuse.
        var parser = ProxyHeaderParser()
        #expect(throws: ProxyProtocolError.self) { try parser.parse(big[..<16]) }
        let limits = ProxyProtocolLimits(maxVersion2HeaderBytes: big.count)
        #expect(try Self.parse([big], limits: limits).header == header)
        let exact = header.version2Bytes(tlvs: [(0xE0, Array(repeating: 0, count: 1024 - 16 - 12 - 3))])
        #expect(exact.count == ProxyProtocolLimits().maxVersion2HeaderBytes)
        #expect(try Self.parse([exact]).header == header)
    }

    @Test func anIncompleteHeaderWaitsAndSaysHowMuchItHolds() throws {
        var parser = ProxyHeaderParser()
        #expect(try parser.parse(Self.line("PROXY TCP4 192.0.2.1")) == .needMore)
        #expect(parser.bytesHeld == 20)
        #expect(try parser.parse(Self.line(" 198.51.100.20 56324 443\r\nGET")) == .header(.proxied(source: Self.client, destination: Self.front), consumed: 26))
    }

    @Test func addressesPrintInTheirUsualForms() {
        #expect(ProxyAddress.ipv4(0x7F00_0001).description == "127.0.0.1")
        #expect(ProxyAddress(bytes: Array(repeating: 0, count: 15) + [1])?.description == "::1")
        #expect(ProxyAddress(bytes: [0xFE, 0x80] + Array(repeating: 0, count: 10) + [0, 1, 0, 2])?.description == "fe80::1:2")
        #expect(ProxyAddress(bytes: [0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 4, 0, 5, 0, 6])?.description == "1:0:2:0:3:4:5:6")
        #expect(ProxyAddress(bytes: [1, 2, 3]) == nil)
    }
}
