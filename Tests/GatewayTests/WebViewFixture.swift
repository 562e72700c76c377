import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Relay
import Replication
import SyncGatewayLog
import Testing
import WebView

/// The gateway behind a relay whose admin listener serves the web view, as `relay --admin` runs
/// it: a ``HistoryObserver`` keeps the sessions, ``AdminServer`` serves the page and its API.
struct WebRelay: Sendable {
    let relayed: RelayedGateway
    let history: SessionHistory
    let adminPort: Int

    var base: String { "http://127.0.0.1:\(adminPort)" }

    func get(_ path: String) async throws -> (status: Int, body: String) {
        try await webGet(port: adminPort, path: path, group: relayed.gateway.group)
    }

    func json(_ path: String) async throws -> [String: Any] {
        let answer = try await get(path)
        #expect(answer.status == 200, "\(path): \(answer.status) \(answer.body)")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }

    /// A raw BLIP connection through the relay (no replicator).
    func rawClient() async throws -> BLIPConnection {
        try #require(try await relayed.dialRelay().connection)
    }

    /// Sends setCheckpoint with an empty `rev` for the same client `times` times: the first
    /// creates the checkpoint, the gateway answers each later one 409 (a stale MVCC rev), the loop
    /// LiteCore gets into when it does not read the server's rev.
    func provokeCheckpointLoop(times: Int = 5) async throws {
        let client = try await rawClient()
        for _ in 0..<times {
            var body = ByteBuffer()
            body.writeString(#"{"local":1}"#)
            let request = BLIPMessage.request(profile: "setCheckpoint", properties: ["client": "web-loop", "rev": ""], body: body)
            _ = try await client.request(request)
        }
        try await client.close()
    }
}

func withWebRelay(seed: @escaping (GatewayDatabase) throws -> Void = { _ in },
                  limits: WebViewLimits = .default, token: String? = nil, captureDirectory: String? = nil,
                  _ body: @escaping @Sendable (WebRelay) async throws -> Void) async throws {
    // The gateway's lines in Sync Gateway's log format go to the history as `relay --sg-log`
    // hands them over (here at once, often before the relay recorded the request they are about).
    let history = SessionHistory(limits: limits, joinsSyncGatewayLog: true)
    try await withGateway(timeout: .seconds(240), configure: { configuration in
        configuration.syncGatewayLog = { line in
            if let parsed = SyncGatewayLogLine(Substring(line)) { history.addSyncGatewayLines([parsed]) }
        }
    }, seed: seed) { gateway in
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                             port: gateway.server.port)))
        configuration.listenPort = 0
        configuration.captureDirectory = captureDirectory
        let recorder = RelayEventTally()
        let log = LineCollector()
        let relay = RelayServer(configuration: configuration, group: gateway.group,
                                logger: Logger(label: "test.relay") { _ in CollectingLogHandler(collector: log) },
                                // The history first: once the recorder has seen an event, the history has it too.
                                observers: [HistoryObserver(history: history), recorder])
        let address = try await relay.start()
        let admin = AdminServer(configuration: AdminConfiguration(host: "127.0.0.1", port: 0, bearerToken: token), group: gateway.group,
                                relay: relay, observer: nil,
                                web: WebAPI(history: history, downloads: captureDirectory.map { CaptureFileDownloads(directory: $0, run: configuration.captureRun) },
                                            now: HistoryObserver.now), metricsText: { [] })
        let adminAddress = try await admin.start()
        let fixture = WebRelay(relayed: RelayedGateway(gateway: gateway, relay: relay, relayPort: try #require(address.port),
                                                       recorder: recorder, log: log),
                               history: history, adminPort: try #require(adminAddress.port))
        do {
            try await body(fixture)
        } catch {
            try? await admin.shutdown()
            try? await relay.shutdown()
            throw error
        }
        try await admin.shutdown()
        try await relay.shutdown()
    }
}

/// GET over loopback with `Connection: close`, the whole answer (dechunked).
func webGet(port: Int, path: String, group: any EventLoopGroup) async throws -> (status: Int, body: String) {
    let text = try await StreamedGet.start(port: port, path: path, group: group).untilClosed()
    guard let split = text.range(of: "\r\n\r\n"),
          let status = Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") else { return (0, text) }
    return (status, String(text[split.upperBound...]))
}

/// An HTTP GET whose answer is read as it arrives (a Server-Sent Events stream never ends):
/// ``until(_:)`` waits, bounded, for text to arrive; the raw text includes chunk sizes.
final class StreamedGet: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let lock = NSLock()
    private var text = ""
    /// The seqs of the rows received so far (``rowSeqs(_:)`` of `text`), parsed a line at a time
    /// as it arrives: a check over thousands of rows then costs the reading event loop nothing.
    private var rows: [Int] = []
    /// The start of a line whose end has not arrived yet.
    private var partialLine = ""
    private var closed = false
    private var waiters: [(check: @Sendable (String, [Int]) -> Bool, continuation: CheckedContinuation<String, Never>)] = []
    private(set) var channel: (any Channel)?

    /// `stalled`: the viewer reads nothing (a small receive buffer, reading off) until ``resume()``.
    static func start(port: Int, path: String, group: any EventLoopGroup, stalled: Bool = false) async throws -> StreamedGet {
        let reader = StreamedGet()
        var bootstrap = ClientBootstrap(group: group)
            .channelInitializer { channel in channel.pipeline.addHandler(reader) }
        if stalled {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: 4096).channelOption(.autoRead, value: false)
        }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        reader.channel = channel
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        return reader
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let more = buffer.readString(length: buffer.readableBytes) ?? ""
        settle { reader in
            reader.text += more
            var lines = (reader.partialLine + more).split(separator: "\n", omittingEmptySubsequences: false)
            reader.partialLine = String(lines.removeLast())
            for line in lines { reader.rows += Self.rowSeqs(String(line)) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) { settle { $0.closed = true } }

    private func settle(_ change: (StreamedGet) -> Void) {
        let ready: [(CheckedContinuation<String, Never>, String)] = lock.withLock {
            change(self)
            var ready: [(CheckedContinuation<String, Never>, String)] = []
            waiters.removeAll { waiter in
                guard waiter.check(text, rows) || closed else { return false }
                ready.append((waiter.continuation, text))
                return true
            }
            return ready
        }
        for (continuation, text) in ready { continuation.resume(returning: text) }
    }

    /// The text so far once `check` holds (or the connection closed), within `seconds`.
    func until(within seconds: Double = 30, _ check: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await waiting(within: seconds) { text, _ in check(text) }
    }

    /// The seqs of the rows received so far once `check` holds for them (or the connection
    /// closed), within `seconds`.
    func untilRows(within seconds: Double = 30, _ check: @escaping @Sendable ([Int]) -> Bool) async throws -> [Int] {
        _ = try await waiting(within: seconds) { _, rows in check(rows) }
        return lock.withLock { rows }
    }

    /// Everything received so far, chunk sizes included.
    var received: String { lock.withLock { text } }

    private func waiting(within seconds: Double, _ check: @escaping @Sendable (String, [Int]) -> Bool) async throws -> String {
        try await withTimeout(.seconds(seconds)) {
            await withCheckedContinuation { continuation in
                let now: String? = self.lock.withLock {
                    if check(self.text, self.rows) || self.closed { return self.text }
                    self.waiters.append((check, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }

    func untilClosed(within seconds: Double = 30) async throws -> String {
        let text = try await until(within: seconds) { _ in false }
        guard lock.withLock({ closed }) else { throw TimedOut() }
        return text.contains("transfer-encoding: chunked") || text.contains("Transfer-Encoding: chunked")
            ? Self.dechunk(text) : text
    }

    func close() { channel?.close(promise: nil) }

    /// A stalled viewer starts reading.
    func resume() async throws {
        guard let channel else { return }
        try await channel.setOption(.autoRead, value: true).get()
        channel.read()
    }

    /// The seqs of every row received in `messages` events, in order.
    static func rowSeqs(_ text: String) -> [Int] {
        var seqs: [Int] = []
        for line in text.split(separator: "\n") where line.hasPrefix("data: {\"rows\":") {
            var rest = line[...]
            while let range = rest.range(of: "{\"i\":") {
                rest = rest[range.upperBound...]
                if let end = rest.firstIndex(where: { !$0.isNumber }), let seq = Int(rest[..<end]) { seqs.append(seq) }
            }
        }
        return seqs
    }

    private static func dechunk(_ text: String) -> String {
        guard let split = text.range(of: "\r\n\r\n") else { return text }
        var rest = Substring(text[split.upperBound...])
        var out = String(text[..<split.upperBound])
        while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
            let start = line.upperBound
            let end = rest.utf8.index(start, offsetBy: size)
            out += rest[start..<end]
            rest = rest[end...].dropFirst(2)
        }
        return out
    }
}

/// GET over loopback, the answer's bytes as they came (a file download: `Connection: close`).
func webGetBytes(port: Int, path: String, group: any EventLoopGroup) async throws -> (status: Int, head: String, body: [UInt8]) {
    let collector = ByteCollector()
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in channel.pipeline.addHandler(collector) }
        .connect(host: "127.0.0.1", port: port).get()
    let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
    try await channel.writeAndFlush(ByteBuffer(string: request)).get()
    let bytes = try await withTimeout(.seconds(60)) { try await collector.done.futureResult.get() }
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    guard let split = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
        return (0, String(decoding: bytes, as: UTF8.self), [])
    }
    let head = String(decoding: bytes[..<split], as: UTF8.self)
    let status = Int(head.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0
    return (status, head, Array(bytes[(split + 4)...]))
}

/// Collects every byte of a connection until it closes.
final class ByteCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var bytes: [UInt8] = []
    let done: EventLoopPromise<[UInt8]>

    init() {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        done = loop.makePromise()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes += unwrapInboundIn(data).readableBytesView
    }

    func channelInactive(context: ChannelHandlerContext) { done.succeed(bytes) }
}
