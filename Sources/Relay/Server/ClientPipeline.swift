import BLIPCore
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import Policy

/// Sets up one accepted client connection: TLS (wss), HTTP with the raw WebSocket upgrader whose
/// `shouldUpgrade` dials the upstream first and answers with the upstream's choice, the
/// ``HandshakeHandler`` for every refusal, and a handshake timeout so a silent client is dropped.
/// Behind a load balancer (``RelayConfiguration/proxyProtocol``) a ``ProxyHeaderHandler`` comes
/// first, before TLS: the client it names is the connection's ``ClientAddress`` from then on.
struct ClientPipeline {
    let server: RelayServer
    let connector: UpstreamConnector
    let sslContext: NIOSSLContext?

    func configure(_ channel: Channel) throws {
        let configuration = server.configuration
        let observers = server.observerSet
        let sync = channel.pipeline.syncOperations
        // Set once, before any request byte is read (by the PROXY header when there is one).
        let client = NIOLoopBoundBox(ClientAddress(peer: channel.remoteAddress), eventLoop: channel.eventLoop)
        if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
        let handshake = HandshakeHandler(
            classify: { head in
                do throws(RelayError) { _ = try ClientHandshake(head) } catch { return error }
                return RelayError(.notAnUpgrade)
            },
            onRefused: { head, refusal in
                guard observers.wants(.sessions) else { return }
                observers.emit(.handshakeRefused(HandshakeRefusal(client: client.value, target: head.uri,
                                                                  status: refusal.status, reason: refusal.reason,
                                                                  upstreamFailure: refusal.upstreamFailure,
                                                                  policyRule: refusal.policyRule)),
                               kind: .sessions)
            },
            onMalformed: { reason in
                guard observers.wants(.sessions) else { return }
                observers.emit(.handshakeRefused(HandshakeRefusal(client: client.value, target: "-",
                                                                  status: .badRequest, reason: reason)),
                               kind: .sessions)
            })
        let pending = Pending(handshake: handshake)
        let bound = NIOLoopBound(pending, eventLoop: channel.eventLoop)
        let headTimeout = configuration.clientHandshakeTimeout
        pending.timeout = channel.eventLoop.scheduleTask(in: headTimeout) {
            guard !bound.value.sawHead else { return }
            let refusal = HandshakeHandler.refusal(for: RelayError(.clientHandshakeTimeout))
            if observers.wants(.sessions) {
                observers.emit(.handshakeRefused(HandshakeRefusal(client: client.value, target: "-",
                                                                  status: refusal.status, reason: refusal.reason)),
                               kind: .sessions)
            }
            HandshakeHandler.sendBeforeRequest(refusal, on: channel)
        }
        if let settings = configuration.proxyProtocol {
            let peer = channel.remoteAddress
            try sync.addHandler(ProxyHeaderHandler(
                settings: settings,
                onHeader: { header in client.value = ClientAddress(header: header, peer: peer) },
                onRefused: { reason in
                    // Refused once, here: no 408 follows for the request that never came.
                    bound.value.timeout?.cancel()
                    guard observers.wants(.sessions) else { return }
                    observers.emit(.proxyRefused(ProxyRefusal(peer: peer, reason: reason)), kind: .sessions)
                }), position: .first)
        }
        let upgrader = RawWebSocketServerUpgrader.make(
            shouldUpgrade: { channel, head in
                shouldUpgrade(channel, head: head, pending: bound.value, client: client.value)
            },
            upgraded: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try upgraded(channel, pending: bound.value)
                }
            })
        try sync.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try sync.addHandler(handshake)
    }

    /// Per-connection handshake state. `@unchecked Sendable`: it is touched only on the channel's
    /// event loop; NIO's upgrader closures merely carry it there.
    final class Pending: @unchecked Sendable {
        let handshake: HandshakeHandler
        /// The client-header timer: stopped once a request head is in.
        var timeout: Scheduled<Void>?
        var headReceived = false
        var session: RelaySession?

        init(handshake: HandshakeHandler) {
            self.handshake = handshake
        }

        /// Whether a complete request head arrived, upgrade or not.
        var sawHead: Bool { headReceived || handshake.sawHead }

        /// A complete request head arrived: from here on only the upstream's timeout runs.
        func receivedHead() {
            headReceived = true
            timeout?.cancel()
        }
    }

    private func shouldUpgrade(_ channel: Channel, head: HTTPRequestHead, pending: Pending,
                               client address: ClientAddress) -> EventLoopFuture<HTTPHeaders?> {
        let configuration = server.configuration
        pending.receivedHead()
        guard !server.isDraining else {
            pending.handshake.refusal = HandshakeHandler.refusal(for: RelayError(.shuttingDown))
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let client: ClientHandshake
        do {
            client = try ClientHandshake(head)
        } catch {
            pending.handshake.refusal = HandshakeHandler.refusal(for: error)
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        guard let url = configuration.upstream.upstream(for: client.database) else {
            pending.handshake.refusal = HandshakeHandler.refusal(for: RelayError(.unknownDatabase(client.database)))
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        guard let request = HandshakeHeaders.upstreamRequest(from: head, uri: url.pathPrefix + head.uri,
                                                             upstreamHost: "\(url.host):\(url.port)",
                                                             clientIP: address.source?.ipAddress,
                                                             clientTLS: sslContext != nil) else {
            pending.handshake.refusal = HandshakeHandler.refusal(for: RelayError(.notAnUpgrade))
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let admission = admit(client, address: address)
        if let refusal = admission.refusal {
            pending.handshake.refusal = refusal
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let info = SessionInfo(id: server.makeSessionID(), client: address, user: client.user,
                               database: client.database, target: head.uri, upstream: url.description,
                               request: head)
        let session = RelaySession(info: info, clientChannel: channel, configuration: configuration,
                                   observers: server.observerSet, checkpoints: server.checkpoints,
                                   budget: server.inProgress)
        pending.session = session
        if let release = admission.release { session.whenFinished(release) }
        channel.closeFuture.whenComplete { _ in session.clientChannelClosed() }
        let hop = HopHandler(side: .upstream)
        hop.session = session
        let boundHop = NIOLoopBound(hop, eventLoop: channel.eventLoop)
        let server = self.server
        let dialStarted = NIODeadline.now()
        return connector.connect(to: url, request: request, hop: hop, on: channel.eventLoop)
            .map { outcome -> HTTPHeaders? in
                switch outcome {
                case .upgraded(let upstream, let response):
                    session.setSubprotocol(response.headers.first(name: "Sec-WebSocket-Protocol"))
                    session.setUpstreamResponse(response)
                    session.setUpstreamConnectTime(.now() - dialStarted)
                    session.attach(boundHop.value, channel: upstream)
                    if session.isFinished { upstream.close(promise: nil) } else { server.register(session) }
                    return HandshakeHeaders.upgradeResponse(from: response)
                case .refused(let response, let body):
                    pending.handshake.refusal = HandshakeHandler.Refusal(
                        status: response.status, headers: HandshakeHeaders.refusalResponse(from: response),
                        body: body, reason: "upstream answered \(response.status.code) \(response.status.reasonPhrase)",
                        upstreamFailure: .refused)
                    return nil
                }
            }
            .recover { error in
                let relayError = error as? RelayError ?? RelayError(.upstreamHandshake("\(error)"))
                pending.handshake.refusal = HandshakeHandler.refusal(for: relayError)
                return nil
            }
    }

    /// Checks the connection rules: the refusal to answer with, or, for an admitted session
    /// (counted by the policy), what to run when the session finishes.
    private func admit(_ client: ClientHandshake, address: ClientAddress)
        -> (refusal: HandshakeHandler.Refusal?, release: (() -> Void)?) {
        guard let connections = server.configuration.policy?.connections else { return (nil, nil) }
        let facts = HandshakeFacts(clientIP: address.ip, user: client.user, database: client.database,
                                   offeredSubprotocols: client.offeredProtocols, tls: sslContext != nil)
        let verdict = connections.admit(facts, now: server.configuration.policyClock())
        let release = verdict.admits ? { connections.sessionClosed(facts) } : nil
        guard case .refuse(let refusal) = verdict else { return (nil, release) }
        if refusal.dryRun {
            server.logger.info("policy dry-run: \(address.ip) \(refusal) (admitted)")
            return (nil, release)
        }
        // Counted as the policy's verdict from the refusal event, as every other verdict is.
        return (HandshakeHandler.refusal(for: refusal), nil)
    }

    private func upgraded(_ channel: Channel, pending: Pending) throws {
        pending.receivedHead()
        let sync = channel.pipeline.syncOperations
        sync.removeHandler(pending.handshake, promise: nil)
        guard let session = pending.session else { throw RelayError(.notAnUpgrade) }
        let hop = HopHandler(side: .client)
        try sync.addHandler(hop)
        session.attach(hop, channel: channel)
    }
}
