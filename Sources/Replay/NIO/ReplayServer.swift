import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The server role: listens like the recorded gateway and replays its side toward a real client
/// on every connection: the client's requests get the recorded replies (matched by profile and
/// key properties, ``PeerRequestMatcher``), and the recorded server-initiated requests (changes,
/// rev …) go out as the ``ReplayScheduler`` allows. Each connection's report comes out of
/// ``reports`` when that connection ends.
///
/// Handshake (wire-format reference §1.2): the recorded sub-protocol is the only one spoken
/// (Sync Gateway's rule: the client's first offer we speak wins, none is refused with 500);
/// when the recorded client sent credentials, a request without `Authorization` gets the 401
/// Basic challenge LiteCore waits for before it sends them. Credentials are not checked.
public final class ReplayServer: Sendable {
    public let port: Int
    /// One report per connection, in the order they end.
    public let reports: AsyncStream<ReplayReport>
    private let server: BLIPWebSocketServer
    private let registry: NIOLockedValueBox<[ObjectIdentifier: PeerResponder]>

    private init(port: Int, reports: AsyncStream<ReplayReport>, server: BLIPWebSocketServer,
                 registry: NIOLockedValueBox<[ObjectIdentifier: PeerResponder]>) {
        self.port = port
        self.reports = reports
        self.server = server
        self.registry = registry
    }

    /// Starts listening on `host:port` (0 picks a free port) with a server-side `script`.
    public static func start(_ script: ReplayScript, session: Int = 0, host: String = "127.0.0.1", port: Int = 0,
                             configuration: ReplayConfiguration, group: EventLoopGroup) async throws(ReplayError) -> ReplayServer {
        let (reports, sink) = AsyncStream.makeStream(of: ReplayReport.self)
        let registry = NIOLockedValueBox<[ObjectIdentifier: PeerResponder]>([:])
        var server = BLIPWebSocketServer.Configuration()
        server.host = host
        server.port = port
        server.limits = configuration.limits
        let handshake = script.handshake
        server.decide = { head in decide(head, handshake: handshake) }
        server.onRequest = { request, handler in
            if let responder = registry.withLockedValue({ $0[ObjectIdentifier(handler)] }) {
                responder.handle(request, from: handler)
            } else if !request.isNoReply {
                handler.sendReply(.error(to: request.number, domain: "BLIP", code: 404, message: "no replay session"))
            }
        }
        server.onConnection = { connection in
            guard let handler = try? connection.channel.pipeline.syncOperations.handler(type: BLIPChannelHandler.self) else {
                connection.channel.close(promise: nil)
                return
            }
            let id = ObjectIdentifier(handler)
            let inbox = ReplayInbox(eventLoop: connection.channel.eventLoop)
            let responder = PeerResponder(script: script, allowances: configuration.allowances, inbox: inbox)
            registry.withLockedValue { $0[id] = responder }
            connection.closed.whenComplete { result in
                inbox.push(.closed(code: (try? result.get()).flatMap { $0.abrupt ? nil : $0.code }))
            }
            let driver = ReplayDriver(script: script, session: session, configuration: configuration,
                                      connection: connection, responder: responder)
            Task {
                let report = await driver.run()
                registry.withLockedValue { _ = $0.removeValue(forKey: id) }
                sink.yield(report)
            }
        }
        let listener: BLIPWebSocketServer
        do {
            listener = try await BLIPWebSocketServer.start(server, group: group)
        } catch {
            throw .connection("cannot listen on \(host):\(port): \(error)")
        }
        return ReplayServer(port: listener.localAddress.port ?? 0, reports: reports, server: listener, registry: registry)
    }

    public func stop() async {
        try? await server.close()
    }

    /// The recorded gateway's answer to an upgrade request.
    static func decide(_ head: HTTPRequestHead, handshake: RecordedHandshake) -> BLIPHandshakeDecision {
        if handshake.sentCredentials, head.headers.first(name: "Authorization") == nil {
            var headers = HTTPHeaders()
            headers.add(name: "WWW-Authenticate", value: "Basic realm=\"Couchbase Sync Gateway\"")
            headers.add(name: "Content-Type", value: "application/json")
            return .refuse(status: .unauthorized, headers: headers,
                           body: "{\"error\":\"Unauthorized\",\"reason\":\"Login required\"}")
        }
        let supported = handshake.subprotocol.map { [$0] } ?? ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"]
        return .syncGatewayChoice(offered: BLIPHandshakeDecision.offeredProtocols(head.headers), supported: supported)
    }
}
