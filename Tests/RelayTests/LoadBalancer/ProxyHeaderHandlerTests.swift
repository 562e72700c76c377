import NIOCore
import NIOEmbedded
import ProxyProtocol
import Testing
@testable import Relay

/// The PROXY header handler on an embedded channel, and the client address a header makes:
/// no sockets, the event loop's clock moved by hand.
@Suite("the PROXY header handler and the client address")
struct ProxyHeaderHandlerTests {
    static let source = ProxyEndpoint(address: .ipv4(0xCB00_7107), port: 40_001)  // 203.0.113.7
    static let destination = ProxyEndpoint(address: .ipv4(0xC633_6409), port: 443)  // 198.51.100.9
    static let header = ProxyHeader.proxied(source: source, destination: destination)

    /// A channel with the handler first and a collector of what it passes on.
    final class Probe {
        let channel = EmbeddedChannel()
        var headers: [ProxyHeader] = []
        var refusals: [ProxyRefusal.Reason] = []

        init(timeout: TimeAmount = .seconds(5)) throws {
            var settings = ProxyProtocolSettings()
            settings.headerTimeout = timeout
            let handler = ProxyHeaderHandler(settings: settings, onHeader: { [unowned self] in headers.append($0) },
                                             onRefused: { [unowned self] in refusals.append($0) })
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4994)).wait()
        }

        func write(_ bytes: [UInt8]) throws { try channel.writeInbound(ByteBuffer(bytes: bytes)) }

        /// Every byte passed on, in order.
        func passed() throws -> [UInt8] {
            var bytes: [UInt8] = []
            while let buffer = try channel.readInbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
            return bytes
        }

        var handlerIsInPipeline: Bool {
            (try? channel.pipeline.syncOperations.context(handlerType: ProxyHeaderHandler.self)) != nil
        }
    }

    @Test("a header cut over reads: reported once, the bytes after it passed on whole, the handler gone")
    func cutHeader() throws {
        let probe = try Probe()
        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let bytes = Self.header.version2Bytes() + request
        try probe.write(Array(bytes[..<5]))
        try probe.write(Array(bytes[5..<20]))
        #expect(try probe.passed().isEmpty, "nothing of the header is passed on")
        #expect(probe.headers.isEmpty)
        try probe.write(Array(bytes[20..<(bytes.count - 4)]))
        #expect(probe.headers == [Self.header])
        #expect(!probe.handlerIsInPipeline)
        try probe.write(Array(bytes[(bytes.count - 4)...]))
        #expect(try probe.passed() == request)
        #expect(probe.refusals.isEmpty)
        #expect(probe.channel.isActive)
    }

    @Test("bytes that are no header: refused with the parser's error, the channel closed, nothing passed on")
    func notAHeader() throws {
        let probe = try Probe()
        try probe.write(Array("GET / HTTP/1.1\r\n".utf8))
        #expect(probe.refusals.map(\.label) == ["not_proxy"])
        #expect(try probe.passed().isEmpty)
        #expect(!probe.channel.isActive)
    }

    @Test("no complete header within the timeout: refused once as a timeout, closed")
    func timeout() throws {
        let probe = try Probe(timeout: .seconds(3))
        try probe.write(Array("PROXY TCP4 ".utf8))
        probe.channel.embeddedEventLoop.advanceTime(by: .milliseconds(2_999))
        #expect(probe.refusals.isEmpty)
        probe.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(probe.refusals == [.timeout(.seconds(3))])
        #expect(!probe.channel.isActive)
    }

    @Test("a close mid-header is reported with the bytes held; a close before any byte (a TCP check) is not")
    func closes() throws {
        let probe = try Probe()
        try probe.write(Array("PROXY TCP".utf8))
        try probe.channel.close().wait()
        #expect(probe.refusals == [.closed(bytes: 9)])
        let silent = try Probe()
        try silent.channel.close().wait()
        #expect(silent.refusals.isEmpty)
    }

    @Test("the client address: a PROXY header's source with the peer as the proxy; LOCAL and UNKNOWN keep the peer")
    func clientAddress() throws {
        let peer = try SocketAddress(ipAddress: "10.0.0.2", port: 51_000)
        let proxied = ClientAddress(header: Self.header, peer: peer)
        #expect(proxied.ip == "203.0.113.7" && proxied.port == 40_001)
        #expect(proxied.description == "203.0.113.7:40001")
        #expect(proxied.destination?.ipAddress == "198.51.100.9")
        #expect(proxied.proxyDescription == "10.0.0.2:51000")
        let v6 = ClientAddress(header: .proxied(source: ProxyEndpoint(address: .ipv6(high: 0x2001_0db8_0000_0000, low: 7), port: 443),
                                                destination: Self.destination), peer: peer)
        #expect(v6.description == "[2001:db8::7]:443")
        for header in [ProxyHeader.local, .unspecified] {
            let own = ClientAddress(header: header, peer: peer)
            #expect(own == ClientAddress(peer: peer))
            #expect(own.ip == "10.0.0.2" && own.proxy == nil && own.proxyDescription == nil)
        }
        #expect(ClientAddress(peer: nil).description == "?")
    }
}
