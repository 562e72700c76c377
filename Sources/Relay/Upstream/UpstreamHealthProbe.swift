import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One health check of one node: `GET /` on its public port (through TLS with the relay's
/// upstream trust for a `wss://` node), passed by an answer head whose status
/// ``UpstreamHealthChecks/passes(status:)`` accepts within the timeout. Never hangs: a connection
/// that fails, closes or stays silent past the timeout fails the check.
struct UpstreamHealthProbe: Sendable {
    /// The upstream TLS context the sessions use (nil when no node is `wss://`).
    let sslContext: NIOSSLContext?
    let timeout: TimeAmount

    /// The check's status code, or why there was none.
    func check(_ node: UpstreamNode, on eventLoop: EventLoop) -> EventLoopFuture<Result<UInt, RelayError>> {
        let promise = eventLoop.makePromise(of: Result<UInt, RelayError>.self)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            promise.succeed(.failure(RelayError(.upstreamCheckFailed("no answer within \(timeout.nanoseconds / 1_000_000) ms"))))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        // Cancelled once answered; failed unrun when the loop shuts down first: the check ends then.
        deadline.futureResult.whenFailure { _ in
            promise.succeed(.failure(RelayError(.upstreamCheckFailed("the relay is shutting down"))))
        }
        let sslContext = node.secure ? sslContext : nil
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        let name = node.host.first?.isLetter == true ? node.host : nil
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(StatusCollector(promise: promise))
                }
            }
        bootstrap.connect(host: node.host, port: node.port).whenComplete { result in
            switch result {
            case .failure(let error):
                promise.succeed(.failure(RelayError(.upstreamCheckFailed("\(error)"))))
            case .success(let channel):
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in
                    promise.succeed(.failure(RelayError(.upstreamCheckFailed("connection closed before an answer"))))
                }
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")
                head.headers.add(name: "Host", value: node.label)
                head.headers.add(name: "User-Agent", value: "blipscope-health-check")
                head.headers.add(name: "Connection", value: "close")
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        return promise.futureResult
    }
}

/// Completes the check with the answer's status as soon as its head arrives (the body is not read).
private final class StatusCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<Result<UInt, RelayError>>

    init(promise: EventLoopPromise<Result<UInt, RelayError>>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            promise.succeed(.success(head.status.code))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.succeed(.failure(RelayError(.upstreamCheckFailed("\(error)"))))
        context.close(promise: nil)
    }
}
