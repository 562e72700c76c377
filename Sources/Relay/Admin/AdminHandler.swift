import NIOCore
import NIOHTTP1
import WebView

/// Answers one admin request per HTTP request head (bodies are ignored); see ``AdminServer``.
final class AdminHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: AdminServer
    private let access: AdminAccess
    private var head: HTTPRequestHead?

    init(server: AdminServer, access: AdminAccess) {
        self.server = server
        self.access = access
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            route(head, context: context)
        }
    }

    private func route(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        if case .refuseClearToken(let reason) = access.verdict(peer: context.channel.remoteAddress, head: head) {
            return respond(context, head, .forbidden, reason + "\n")
        }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let webPath = server.web != nil && WebAPI.serves(path)
        // The page's own requests (EventSource cannot send headers) may carry the token as
        // `access_token` in the query (RFC 6750 §2.3); only the web view's paths take it there.
        let queryToken = webPath ? WebRequest(target: head.uri).query["access_token"].map { "Bearer \($0)" } : nil
        if !server.configuration.authorizes(head.headers.first(name: "authorization"))
            && !(queryToken.map { server.configuration.authorizes($0) } ?? false) {
            return respond(context, head, .unauthorized, "unauthorized\n",
                           extra: [("WWW-Authenticate", "Bearer")])
        }
        guard head.method == .GET else { return respond(context, head, .methodNotAllowed, "GET only\n") }
        if webPath, let web = server.web {
            return WebResponder.respond(head, api: web, slots: server.viewerSlots, context: context)
        }
        switch path {
        case "/metrics":
            var buffer = context.channel.allocator.buffer(capacity: 16 * 1024)
            buffer.writeBytes(server.metricsText())
            respond(context, head, .ok, buffer, contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/healthz":
            respond(context, head, .ok, "ok\n")
        case "/readyz":
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let promise = context.eventLoop.makePromise(of: Readiness.self)
            promise.completeWithTask { [server] in await server.readiness() }
            promise.futureResult.whenSuccess { readiness in
                let (handler, context) = loopBound.value
                handler.respond(context, head, readiness.isReady ? .ok : .serviceUnavailable, readiness.text)
            }
        case "/sessions", "/sessions/":
            respond(context, head, .ok, server.sessionsJSON(), contentType: "application/json")
        case _ where path.hasPrefix("/sessions/"):
            if let id = UInt64(path.dropFirst("/sessions/".count)), let json = server.sessionJSON(id: id) {
                respond(context, head, .ok, json, contentType: "application/json")
            } else {
                respond(context, head, .notFound, "no such session\n")
            }
        default:
            respond(context, head, .notFound, "not found\n")
        }
    }

    private func respond(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, _ status: HTTPResponseStatus,
                         _ text: String, contentType: String = "text/plain; charset=utf-8",
                         extra: [(String, String)] = []) {
        respond(context, request, status, context.channel.allocator.buffer(string: text), contentType: contentType,
                extra: extra)
    }

    private func respond(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, _ status: HTTPResponseStatus,
                         _ body: ByteBuffer, contentType: String, extra: [(String, String)] = []) {
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(body.readableBytes))])
        headers.add(contentsOf: extra)
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
                      promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let channel = context.channel
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }
}
