import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A client's WebSocket upgrade request, written to the wire exactly as planned: header names,
/// order and token spelling (wire-format reference §1.2).
///
/// NIO's client upgrade handler appends its own `Connection: upgrade` and `Upgrade` headers. Some
/// servers match those tokens case-sensitively: LiteCore's HTTP server, the engine of Couchbase
/// Lite's peer-to-peer listener, answers `405` unless it reads `Connection: Upgrade` (docs/
/// litecore-behaviour.md). So the request is planned here and ``install(on:upgrader:)`` puts a
/// writer under NIO's handler that sends the planned head in place of NIO's. NIO still checks the
/// 101 (`Sec-WebSocket-Accept` against ``key``) and hands over the upgraded channel.
public struct WebSocketUpgradeRequest: Sendable {
    /// The request head as it goes on the wire.
    public let head: HTTPRequestHead
    /// Its `Sec-WebSocket-Key`, which the upgrader checks the answer's `Sec-WebSocket-Accept` against.
    public let key: String

    /// BlipScope's own request, spelled the way LiteCore spells its own: `Host`,
    /// `Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13`,
    /// `Sec-WebSocket-Key`, the sub-protocols as one comma-joined value (§1.2), then `headers`.
    public init(uri: String, host: String, subprotocols: [String], headers: HTTPHeaders = [:],
                key: String = NIOWebSocketClientUpgrader.randomRequestKey()) {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Connection", value: "Upgrade")
        head.headers.add(name: "Upgrade", value: "websocket")
        head.headers.add(name: "Sec-WebSocket-Version", value: "13")
        head.headers.add(name: "Sec-WebSocket-Key", value: key)
        if !subprotocols.isEmpty {
            head.headers.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ","))
        }
        head.headers.add(contentsOf: headers)
        self.head = head
        self.key = key
    }

    /// A request planned elsewhere (the relay's forwarded copy of its client's); nil when it has
    /// no `Sec-WebSocket-Key`, without which no answer can be checked.
    public init?(planned head: HTTPRequestHead) {
        guard let key = head.headers.first(name: "Sec-WebSocket-Key"), !key.isEmpty else { return nil }
        self.head = head
        self.key = key
    }

    /// Adds the HTTP client handlers, NIO's upgrade handler with `upgrader`, and the writer
    /// between them. Write ``head`` (then `.end`) once the channel is active; the writer leaves
    /// the pipeline with the HTTP handlers when the upgrade succeeds.
    public func install(on pipeline: ChannelPipeline.SynchronousOperations,
                        upgrader: any NIOHTTPClientProtocolUpgrader) throws {
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let writer = PlannedHeadWriter(head: head)
        try pipeline.addHandler(encoder)
        try pipeline.addHandler(decoder)
        try pipeline.addHandler(writer)
        try pipeline.addHandler(NIOHTTPClientUpgradeHandler(upgraders: [upgrader],
                                                            httpHandlers: [encoder, decoder, writer],
                                                            upgradeCompletionHandler: { _ in }))
    }
}

/// Sends the planned head in place of the one NIO's upgrade handler composed; bodies and ends
/// pass unchanged.
final class PlannedHeadWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead

    init(head: HTTPRequestHead) { self.head = head }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

extension HTTPHeaders {
    /// `Connection: Upgrade` spelled as Sync Gateway and LiteCore spell it, in place of NIO's
    /// lower-case `upgrade` on a 101 this process writes.
    public mutating func spellConnectionUpgrade() {
        guard let value = first(name: "Connection"), value.lowercased() == "upgrade" else { return }
        replaceOrAdd(name: "Connection", value: "Upgrade")
    }
}
