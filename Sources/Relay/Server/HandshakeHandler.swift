import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The HTTP side of an accepted client connection, for every request the relay does not upgrade:
/// it answers with the refusal decided during the upgrade attempt (the relay's own error, or the
/// upstream's status, headers and body passed on), or, for a request that asked for no upgrade,
/// with 404 / 400. Then it closes the connection. Removed from the pipeline on upgrade.
final class HandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Refusal {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: ByteBuffer
        var reason: String
        /// Set when the refusal is the upstream's doing (its own answer, or a failed dial).
        var upstreamFailure: UpstreamFailure? = nil
        /// Set when a connection rule of the policy refused the session.
        var policyRule: String? = nil
    }

    /// Set by the upgrade attempt when it decides not to upgrade.
    var refusal: Refusal?
    /// Set when a request head that asked for no upgrade arrived.
    private(set) var sawHead = false
    /// Decides the answer to a request that did not ask for an upgrade.
    private let classify: (HTTPRequestHead) -> RelayError
    private let onRefused: (HTTPRequestHead, Refusal) -> Void

    /// Told why a request that could not be parsed was refused (NIO answered it 400).
    private let onMalformed: (String) -> Void

    init(classify: @escaping (HTTPRequestHead) -> RelayError,
         onRefused: @escaping (HTTPRequestHead, Refusal) -> Void,
         onMalformed: @escaping (String) -> Void = { _ in }) {
        self.classify = classify
        self.onRefused = onRefused
        self.onMalformed = onMalformed
    }

    static func refusal(for error: RelayError) -> Refusal {
        var body = ByteBuffer()
        body.writeString(error.description + "\n")
        var headers = error.responseHeaders
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return Refusal(status: error.httpStatus, headers: headers, body: body, reason: error.description,
                       upstreamFailure: error.upstreamFailure)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        sawHead = true
        let refusal = self.refusal ?? Self.refusal(for: classify(head))
        onRefused(head, refusal)
        var headers = refusal.headers
        headers.replaceOrAdd(name: "Content-Length", value: String(refusal.body.readableBytes))
        headers.replaceOrAdd(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: refusal.status,
                                                             headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(refusal.body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Answers a client that has not sent a complete request head (408 for a slow one), then
    /// closes. NIO's HTTP server handlers expect a request before any response, so the answer
    /// is written as bytes below the HTTP encoder (still through TLS, if any).
    static func sendBeforeRequest(_ refusal: Refusal, on channel: Channel) {
        var text = "HTTP/1.1 \(refusal.status.code) \(refusal.status.reasonPhrase)\r\n"
        for (name, value) in refusal.headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(refusal.body.readableBytes)\r\nConnection: close\r\n\r\n"
        var bytes = channel.allocator.buffer(capacity: text.utf8.count + refusal.body.readableBytes)
        bytes.writeString(text)
        bytes.writeImmutableBuffer(refusal.body)
        guard let encoder = try? channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            channel.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A declined upgrade surfaces as an error before the request reaches `channelRead`.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketUpgradeError { return }
        if let parse = error as? HTTPParserError, !sawHead {
            // NIO's protocol error handler has answered 400 already; the refusal is logged here.
            onMalformed("malformed HTTP request: \(parse)")
        }
        context.close(promise: nil)
    }
}
