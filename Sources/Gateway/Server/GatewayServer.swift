import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOHTTP1

/// The embedded passive peer on the network (`blipscope gateway`): a ``BLIPWebSocketServer``
/// whose handshakes ``GatewayHandshake`` decides and whose connections each get a
/// ``PassiveSession`` over the named ``GatewayDatabase``.
///
/// Start with ``start(_:group:)``; ``port`` is the bound port (useful with port 0); ``stop()``
/// closes the listener and every open connection with 1001 "going away".
public final class GatewayServer: Sendable {
    private let server: BLIPWebSocketServer
    private let registry: SessionRegistry

    /// The TCP port the server listens on.
    public let port: Int

    private init(server: BLIPWebSocketServer, registry: SessionRegistry) {
        self.server = server
        self.registry = registry
        self.port = server.localAddress.port ?? 0
    }

    public static func start(_ configuration: GatewayConfiguration, group: EventLoopGroup) async throws -> GatewayServer {
        let registry = SessionRegistry()
        var server = BLIPWebSocketServer.Configuration()
        server.host = configuration.host
        server.port = configuration.port
        server.tls = configuration.tls
        server.limits = configuration.blipLimits
        server.decide = { head in
            switch GatewayHandshake.decide(head, configuration: configuration) {
            case .refuse(let decision):
                return decision
            case .accept(let handshake, let decision):
                if let key = head.headers.first(name: "Sec-WebSocket-Key") { registry.expect(key, handshake) }
                return decision
            }
        }
        server.onConnection = { connection in
            Self.open(connection, configuration: configuration, registry: registry)
        }
        server.onRequest = { request, handler in
            if let session = registry.session(for: handler) {
                session.handle(request)
            } else if !request.isNoReply {
                handler.sendReply(GatewayError.noHandler(for: request))
            }
        }
        let listener = try await BLIPWebSocketServer.start(server, group: group)
        configuration.logger.info("gateway listening on \(configuration.host):\(listener.localAddress.port ?? 0), databases \(configuration.databases.map(\.name))")
        return GatewayServer(server: listener, registry: registry)
    }

    /// Runs on the connection's event loop, right after the upgrade.
    private static func open(_ connection: BLIPConnection, configuration: GatewayConfiguration, registry: SessionRegistry) {
        guard let key = connection.handshakeHeaders.first(name: "Sec-WebSocket-Key"),
              let handshake = registry.take(key),
              let database = configuration.database(named: handshake.database),
              let handler = try? connection.channel.pipeline.syncOperations.handler(type: BLIPChannelHandler.self) else {
            connection.channel.close(promise: nil)
            return
        }
        var logger = configuration.logger
        logger[metadataKey: "db"] = "\(handshake.database)"
        if let user = handshake.user { logger[metadataKey: "user"] = "\(user)" }
        let session = PassiveSession(database: database, peer: handler, eventLoop: connection.channel.eventLoop,
                                     limits: configuration.limits, conflictFree: configuration.conflictFree,
                                     user: handshake.user, logger: logger,
                                     protocolVersion: GatewayHandshake.protocolVersion(of: connection.subprotocol),
                                     log: configuration.syncGatewayLog.map {
                                         SyncGatewayStyleLog(context: handshake.correlationID, database: handshake.database, write: $0)
                                     })
        let id = registry.add(session, handler: handler, connection: connection)
        logger.debug("connection \(id) opened with \(connection.subprotocol ?? "no sub-protocol")")
        connection.closed.whenComplete { _ in
            registry.remove(id)
            session.close()
        }
    }

    /// Number of open replication connections.
    public var connectionCount: Int { registry.count }

    public func stop() async throws {
        for connection in registry.connections {
            try? await connection.close(code: 1001, reason: "gateway stopping")
        }
        try await server.close()
    }
}

/// Connections in flight between handshake and upgrade (by `Sec-WebSocket-Key`), and open
/// sessions by their channel handler. Locked: handshakes and connections run on many loops.
final class SessionRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [String: GatewayHandshake] = [:]
    private var sessions: [ObjectIdentifier: (session: PassiveSession, connection: BLIPConnection)] = [:]

    /// Handshakes accepted but never upgraded are forgotten beyond this many.
    private static let maxPending = 1024

    func expect(_ key: String, _ handshake: GatewayHandshake) {
        lock.withLock {
            if pending.count >= Self.maxPending { pending.removeAll() }
            pending[key] = handshake
        }
    }

    func take(_ key: String) -> GatewayHandshake? { lock.withLock { pending.removeValue(forKey: key) } }

    func add(_ session: PassiveSession, handler: BLIPChannelHandler, connection: BLIPConnection) -> ObjectIdentifier {
        let id = ObjectIdentifier(handler)
        lock.withLock { sessions[id] = (session, connection) }
        return id
    }

    func remove(_ id: ObjectIdentifier) { lock.withLock { _ = sessions.removeValue(forKey: id) } }

    func session(for handler: BLIPChannelHandler) -> PassiveSession? {
        lock.withLock { sessions[ObjectIdentifier(handler)]?.session }
    }

    var count: Int { lock.withLock { sessions.count } }
    var connections: [BLIPConnection] { lock.withLock { sessions.values.map(\.connection) } }
}
