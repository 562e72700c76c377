import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing
import WebSocketWire
#if canImport(Glibc)
import Glibc
#endif

/// The live path through real sockets on loopback. Needs capture permission (root, or
/// CAP_NET_RAW); skipped otherwise.
@Suite("Sniffer: live capture on loopback")
struct LiveSniffTests {
    static let canCapture = LivePcapSource.canCapture(on: "lo")

    @Test("a WebSocket BLIP exchange over loopback TCP is decoded live",
          .enabled(if: LiveSniffTests.canCapture, "cannot capture on lo (needs root or CAP_NET_RAW)"),
          .timeLimit(.minutes(1)))
    func loopbackExchange() throws {
        let session = try RecordedSession.make()
        let listener = try LoopbackSocket.listen()
        defer { close(listener.descriptor) }
        let source = try LivePcapSource(interface: "lo", filter: "tcp port \(listener.port)", readTimeoutMilliseconds: 50)
        let client = try LoopbackSocket.connect(port: listener.port)
        let server = accept(listener.descriptor, nil, nil)
        try #require(server >= 0)
        // Drain both receiving sides so large messages never block the writers.
        let drains = [LoopbackSocket.drain(server), LoopbackSocket.drain(client)]

        LoopbackSocket.write(client, Array(WebSocketBytes.upgradeRequest.utf8))
        LoopbackSocket.write(server, Array(WebSocketBytes.switchingProtocols.utf8))
        for (index, frame) in session.wire.enumerated() {
            let fromClient = frame.direction == .clientToServer
            let bytes = WebSocketFrameWriter.frame(
                opcode: 2, payload: frame.bytes.readableBytesView,
                mask: fromClient ? WebSocketMaskingKey.deterministic(index: UInt64(index)) : nil)
            LoopbackSocket.write(fromClient ? client : server, bytes)
        }
        LoopbackSocket.write(client, WebSocketFrameWriter.frame(
            opcode: 8, payload: WebSocketFrameWriter.closePayload(code: 1000, reason: "done"),
            mask: WebSocketMaskingKey.deterministic(index: 999)))
        shutdown(client, Int32(SHUT_WR))
        shutdown(server, Int32(SHUT_WR))

        let sniffer = Sniffer(configuration: Sniffer.Configuration(serverPort: listener.port))
        var records: [InspectRecord] = []
        var opened = false
        var closed = false
        // Until the sniffer has seen both FINs: each follows all of its side's data, whatever
        // order the two sides' last segments took on the wire.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !closed {
            guard let packet = try source.next() else { continue }
            sniffer.receive(packet) { output in
                switch output {
                case .record(let record): records.append(record)
                case .connectionOpened(_, _, _, let request, _, let midSession): opened = request != nil && !midSession
                case .connectionClosed: closed = true
                default: break
                }
            }
        }
        #expect(closed, "both FINs within the bound")
        for drain in drains { drain.wait() }
        close(client)
        close(server)
        #expect(opened)
        let messages = records.compactMap { if case .message(let message) = $0.kind { message } else { nil } }
        #expect(messages.count == 7)
        #expect(Set(messages.compactMap(\.profile)) == ["getCheckpoint", "changes", "rev", "norev"])
        #expect(records.allSatisfy { if case .error = $0.kind { false } else { true } },
                "\(records.map { $0.textLine() })")
        #expect(records.contains { if case .close(1000, "done") = $0.kind { true } else { false } })
    }
}

/// Blocking POSIX sockets on 127.0.0.1, enough for one test conversation.
enum LoopbackSocket {
    static func listen() throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && Glibc.listen(descriptor, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    static func connect(port: UInt16) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        return descriptor
    }

    static func write(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads and discards until end of stream, on its own thread.
    static func drain(_ descriptor: Int32) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress!, $0.count) }) > 0 {}
            group.leave()
        }
        return group
    }
}
