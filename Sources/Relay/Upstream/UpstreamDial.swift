import BLIPNIO
import NIOCore

/// One session's dial of its route, before the client's 101: node after node as the
/// ``UpstreamBalancer`` picks them, each at most once. A node that is at fault — no connection
/// (refused, unreachable, TLS), no answer in time, a 5xx, a 101 the relay cannot accept — is
/// passed over for the next; any other answer (401, 403, 404 …) is the client's and goes back to
/// it at once, as does the first 101. When every node failed the client gets the last failure,
/// as with one node.
struct UpstreamDial: Sendable {
    let connector: UpstreamConnector
    let balancer: UpstreamBalancer
    let route: UpstreamRoute
    let urls: [UpstreamURL]
    let sessionID: UInt64
    /// The upgrade request for a node's URL (its `Host` and path prefix).
    let makeRequest: @Sendable (UpstreamURL) -> WebSocketUpgradeRequest?
    /// A fresh upstream hop for each node tried: a hop joins only the channel that upgraded.
    let makeHop: @Sendable () -> HopHandler

    /// What the chosen node answered, which node it was, and the hop now in its channel.
    struct Answer: Sendable {
        var outcome: UpstreamOutcome
        var url: UpstreamURL
        /// The node's index in the balancer (released when the session ends).
        var node: Int
        var hop: NIOLoopBound<HopHandler>
    }

    func connect(on eventLoop: EventLoop) -> EventLoopFuture<Answer> {
        attempt(tried: [], last: nil, on: eventLoop)
    }

    private func attempt(tried: Set<Int>, last: Result<Answer, RelayError>?, on eventLoop: EventLoop) -> EventLoopFuture<Answer> {
        guard let picked = balancer.pick(route, excluding: tried) else {
            let result = last ?? .failure(RelayError(.upstreamUnreachable("no node left")))
            return eventLoop.makeCompletedFuture(result.mapError { $0 as any Error })
        }
        let index = picked.index, node = picked.node
        guard let url = urls.first(where: { $0.node == node }), let request = makeRequest(url) else {
            balancer.released(index)
            return eventLoop.makeFailedFuture(RelayError(.notAnUpgrade))
        }
        let hop = makeHop()
        let boundHop = NIOLoopBound(hop, eventLoop: eventLoop)
        let promise = eventLoop.makePromise(of: Answer.self)
        connector.connect(to: url, request: request, hop: hop, on: eventLoop).whenComplete { result in
            switch result {
            case .success(let outcome):
                let answer = Answer(outcome: outcome, url: url, node: index, hop: boundHop)
                switch outcome {
                case .upgraded:
                    balancer.opened(index)
                    promise.succeed(answer)
                case .refused(let response, _) where response.status.code >= 500:
                    balancer.skipped(index, session: sessionID, reason: .refused, logged: urls.count > 1,
                                     detail: "answered \(response.status.code) \(response.status.reasonPhrase)")
                    attempt(tried: tried.union([index]), last: .success(answer), on: eventLoop).cascade(to: promise)
                case .refused:
                    balancer.released(index)
                    promise.succeed(answer)
                }
            case .failure(let error):
                let relayError = error as? RelayError ?? RelayError(.upstreamHandshake("\(error)"))
                balancer.skipped(index, session: sessionID, reason: relayError.upstreamFailure ?? .handshake,
                                 logged: urls.count > 1, detail: relayError.description)
                attempt(tried: tried.union([index]), last: .failure(relayError), on: eventLoop).cascade(to: promise)
            }
        }
        return promise.futureResult
    }
}
