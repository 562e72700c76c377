import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOHTTP1
import Replication

/// The active peer (what Couchbase Lite's replicator does; `blipscope replicate`): replicates a
/// local ``GatewayDatabase`` with any BLIP replication endpoint, pushing, pulling or both, once or
/// continuously (replication-protocol §5).
///
/// One-shot ``run()`` returns when the pull has caught up and every push batch is answered;
/// continuous ``run()`` returns after ``stop()``. Conflicts are reported in the result, never
/// resolved. Credentials go out only after the server's 401 challenge, as LiteCore sends them.
public final class Replicator: Sendable {
    public let configuration: ReplicatorConfiguration
    public let database: GatewayDatabase
    let eventLoop: EventLoop
    private let stopPromise: EventLoopPromise<Void>

    public init(configuration: ReplicatorConfiguration, database: GatewayDatabase, group: EventLoopGroup) {
        self.configuration = configuration
        self.database = database
        self.eventLoop = group.next()
        self.stopPromise = eventLoop.makePromise()
    }

    deinit { stopPromise.succeed() }

    /// Ends a continuous replication (or cuts a one-shot one short); ``run()`` then returns.
    public func stop() { stopPromise.succeed() }

    /// Runs the replication. Throws when it cannot connect or the handshake is refused
    /// (``GatewayError/status`` holds the HTTP status), when the peer lacks a collection, or
    /// when the connection drops before a one-shot replication finished (``GatewayError/closeCode``
    /// holds the peer's close code, ``GatewayError/closeReaction`` how Couchbase Lite would react).
    public func run() async throws -> ReplicationResult {
        let paths = configuration.collections.isEmpty ? [GatewayDatabase.defaultCollection] : configuration.collections
        let legacy = configuration.collections.isEmpty
        let results = ResultCollector()
        let session = ActiveSession(database: database, paths: paths, legacy: legacy, limits: configuration.limits,
                                    results: results, eventLoop: eventLoop)
        let connection = try await connect(session)
        results.update { $0.subprotocol = connection.subprotocol }
        connection.closed.whenComplete { _ in session.connectionClosed() }
        do {
            let keepers = try await loadCheckpoints(connection, paths: paths, legacy: legacy)
            try await replicate(connection, session: session, keepers: keepers, paths: paths, legacy: legacy, results: results)
            for keeper in keepers { try await keeper.save() }
        } catch {
            let ended = await endedByPeer(error, connection: connection)
            try? await connection.close(code: 1000, reason: "")
            throw ended
        }
        try? await connection.close(code: 1000, reason: "")
        return results.snapshot
    }

    private func replicate(_ connection: BLIPConnection, session: ActiveSession, keepers: [CheckpointKeeper],
                           paths: [CollectionPath], legacy: Bool, results: ResultCollector) async throws {
        // Pull progress is reported on the event loop in order; one task saves the newest of it,
        // and the replication is over only once that task has saved the last.
        let progress = PullProgress()
        session.onPullProgress = { index, sequence in progress.note(index, sequence: sequence) }
        let saver = Task {
            await progress.saveAll { index, sequence in
                await keepers[index].noteRemote(sequence)
                try? await keepers[index].save()
            }
        }
        do {
            try await exchange(connection, session: session, keepers: keepers, paths: paths, legacy: legacy, results: results)
        } catch {
            progress.finish()
            saver.cancel()
            throw error
        }
        progress.finish()
        await saver.value
    }

    private func exchange(_ connection: BLIPConnection, session: ActiveSession, keepers: [CheckpointKeeper],
                          paths: [CollectionPath], legacy: Bool, results: ResultCollector) async throws {
        if configuration.direction.pulls {
            for index in paths.indices {
                try await subscribe(connection, session: session, index: legacy ? nil : index, since: await keepers[index].remote)
            }
        }
        let pushed = configuration.direction.pushes ? Array(paths.indices) : []
        let signals = pushed.map { _ in LocalChanges(database: database, continuous: configuration.continuous) }
        defer { for signal in signals { signal.finish() } }
        stopPromise.futureResult.whenComplete { _ in for signal in signals { signal.finish() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            if configuration.direction.pushes {
                for index in pushed {
                    let pusher = Pusher(connection: connection, database: database, configuration: configuration,
                                        path: paths[index], collectionIndex: legacy ? nil : index,
                                        keeper: keepers[index], results: results, changes: signals[index])
                    group.addTask { try await pusher.run() }
                }
            }
            try await group.waitForAll()
        }
        if configuration.continuous {
            try await stopPromise.futureResult.get()
        } else if configuration.direction.pulls {
            try await session.pullCompleted.futureResult.or(stopPromise.futureResult).get()
        }
    }

    /// A failure caused by the connection ending underneath the replication, as the close the peer
    /// sent (``WebSocketClose/abnormal``, 1006, for a drop without CLOSE), so that callers can
    /// tell transient from permanent ends (``GatewayError/closeReaction``, wire-format reference §7).
    /// Only errors raised by a closed channel wait for its close, which has then already happened.
    private func endedByPeer(_ error: any Error, connection: BLIPConnection) async -> any Error {
        let closedUnderneath: Bool
        switch error {
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof: closedUnderneath = true
        case let error as GatewayError: closedUnderneath = error == ActiveSession.closedBeforeFinishing
        default: closedUnderneath = false
        }
        guard closedUnderneath, let close = try? await connection.closed.get() else { return error }
        return GatewayError.peerClosed(code: close.code, reason: close.reason)
    }

    private func subscribe(_ connection: BLIPConnection, session: ActiveSession, index: Int?, since: JSONValue?) async throws {
        var properties = Properties([.batch: String(configuration.limits.changesBatchSize)])
        if let since { properties[.since] = since.description }
        if configuration.continuous { properties[.continuous] = "true" }
        if configuration.activeOnly { properties[.activeOnly] = "true" }
        if let channels = configuration.channels {
            properties[.filter] = "sync_gateway/bychannel"
            properties[.channels] = channels.joined(separator: ",")
        }
        if let index { properties[.collection] = String(index) }
        var body = ByteBuffer()
        if let docIDs = configuration.docIDs {
            body = JSONValue.object(["docIDs": .array(docIDs.map(JSONValue.string))]).jsonBuffer
        }
        try await eventLoop.submit { session.subscribe(index ?? 0) }.get()
        let reply = try await connection.request(.request(profile: ReplicationProfile.subChanges.rawValue,
                                                          properties: properties, body: body))
        if let error = GatewayError.from(reply: reply) { throw error }
    }
}

extension EventLoopFuture where Value == Void {
    /// Completes with whichever of the two completes first.
    func or(_ other: EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        cascade(to: promise)
        other.hop(to: eventLoop).whenComplete { promise.completeWith($0) }
        return promise.futureResult
    }
}
