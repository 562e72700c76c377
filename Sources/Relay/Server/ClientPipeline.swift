import BLIPCore
import BLIPNIO
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
    let balancer: UpstreamBalancer
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
        guard let routed = configuration.upstream.route(for: client.database) else {
            pending.handshake.refusal = HandshakeHandler.refusal(for: RelayError(.unknownDatabase(client.database)))
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let route = routed.route, urls = routed.nodes
        let clientIP = address.source?.ipAddress, clientTLS = sslContext != nil
        let makeRequest: @Sendable (UpstreamURL) -> WebSocketUpgradeRequest? = { url in
            HandshakeHeaders.upstreamRequest(from: head, uri: url.pathPrefix + head.uri, upstreamHost: "\(url.host):\(url.port)",
                                             clientIP: clientIP, clientTLS: clientTLS)
        }
        guard makeRequest(urls[0]) != nil else {
            pending.handshake.refusal = HandshakeHandler.refusal(for: RelayError(.notAnUpgrade))
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let admission = admit(client, address: address)
        if let refusal = admission.refusal {
            pending.handshake.refusal = refusal
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        let sessionID = server.makeSessionID()
        guard let fleet = admission.fleet else {
            return dial(channel, head: head, client: client, route: route, urls: urls, makeRequest: makeRequest,
                        pending: pending, address: address, sessionID: sessionID, release: admission.release)
        }
        // The fleet's counts, after the local rules: one bounded Redis round trip per claim.
        let (limiter, claims) = fleet
        let logger = server.logger
        return channel.eventLoop.makeFutureWithTask { await limiter.open(claims, session: sessionID) }
            .flatMap { refusal -> EventLoopFuture<HTTPHeaders?> in
                if let refusal, !refusal.dryRun {
                    admission.release?()
                    pending.handshake.refusal = HandshakeHandler.refusal(for: refusal)
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                if let refusal { logger.info("policy dry-run: \(address.ip) \(refusal) (admitted)") }
                let local = admission.release
                let release: @Sendable () -> Void = { local?(); limiter.close(claims, session: sessionID) }
                return self.dial(channel, head: head, client: client, route: route, urls: urls, makeRequest: makeRequest,
                                 pending: pending, address: address, sessionID: sessionID, release: release)
            }
    }

    /// Opens the session and dials its upstream; `release` runs when the session finishes.
    private func dial(_ channel: Channel, head: HTTPRequestHead, client: ClientHandshake, route: UpstreamRoute, urls: [UpstreamURL],
                      makeRequest: @escaping @Sendable (UpstreamURL) -> WebSocketUpgradeRequest?,
                      pending: Pending, address: ClientAddress, sessionID: UInt64,
                      release: (@Sendable () -> Void)?) -> EventLoopFuture<HTTPHeaders?> {
        let configuration = server.configuration
        let info = SessionInfo(id: sessionID, client: address, user: client.user,
                               database: client.database, target: head.uri, upstream: urls[0].description,
                               request: head)
        let session = RelaySession(info: info, clientChannel: channel, configuration: configuration,
                                   observers: server.observerSet, checkpoints: server.checkpoints,
                                   budget: server.inProgress)
        pending.session = session
        if let release { session.whenFinished(release) }
        channel.closeFuture.whenComplete { _ in session.clientChannelClosed() }
        let server = self.server, balancer = self.balancer
        let dial = UpstreamDial(connector: connector, balancer: balancer, route: route, urls: urls, sessionID: info.id,
                                makeRequest: makeRequest,
                                makeHop: { let hop = HopHandler(side: .upstream); hop.session = session; return hop })
        let dialStarted = NIODeadline.now()
        return dial.connect(on: channel.eventLoop)
            .map { answer -> HTTPHeaders? in
                switch answer.outcome {
                case .upgraded(let upstream, let response):
                    session.setUpstream(answer.url)
                    session.setSubprotocol(response.headers.first(name: "Sec-WebSocket-Protocol"))
                    session.setUpstreamResponse(response)
                    session.setUpstreamConnectTime(.now() - dialStarted)
                    session.attach(answer.hop.value, channel: upstream)
                    session.whenFinished { balancer.released(answer.node) }
                    if session.isFinished { upstream.close(promise: nil) } else { server.register(session) }
                    return HandshakeHeaders.upgradeResponse(from: response)
                case .refused(let response, let body):
                    pending.handshake.refusal = HandshakeHandler.Refusal(
                        status: response.status, headers: HandshakeHeaders.refusalResponse(from: response),
                        body: body, reason: "upstream \(answer.url.node.label) answered \(response.status.code) \(response.status.reasonPhrase)",
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
    private func admit(_ client: ClientHandshake, address: ClientAddress) -> Admission {
        guard let policy = server.configuration.policy else { return Admission() }
        let connections = policy.connections
        let facts = HandshakeFacts(clientIP: address.ip, user: client.user, database: client.database,
                                   offeredSubprotocols: client.offeredProtocols, tls: sslContext != nil)
        let verdict = connections.admit(facts, now: server.configuration.policyClock())
        var release: (@Sendable () -> Void)?
        if verdict.admits { release = { connections.sessionClosed(facts) } }
        let claims = verdict.admits ? connections.fleetSessionClaims(facts) : []
        let fleet = policy.state.fleetSessions.flatMap { claims.isEmpty ? nil : ($0, claims) }
        guard case .refuse(let refusal) = verdict else { return Admission(release: release, fleet: fleet) }
        if refusal.dryRun {
            server.logger.info("policy dry-run: \(address.ip) \(refusal) (admitted)")
            return Admission(release: release, fleet: fleet)
        }
        // Counted as the policy's verdict from the refusal event, as every other verdict is.
        return Admission(refusal: HandshakeHandler.refusal(for: refusal))
    }

    /// What the connection rules said: a refusal, or what to run when the session finishes and
    /// the fleet-wide counts it must also fit in.
    private struct Admission {
        var refusal: HandshakeHandler.Refusal?
        var release: (@Sendable () -> Void)?
        var fleet: (any FleetSessionLimiting, [FleetSessionClaim])?
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
