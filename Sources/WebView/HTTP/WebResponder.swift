import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Writes a ``WebResponse`` on an HTTP/1.1 connection: content in one go, a file as a file
/// region, a live feed as Server-Sent Events (``EventStreamWriter``). The thin NIO shell of
/// ``WebAPI``, shared by the admin listener and `blipscope web`.
public enum WebResponder {
    /// Answers `head` with `api`'s response. `slots` bounds the live feeds open at once.
    public static func respond(_ head: HTTPRequestHead, api: WebAPI, slots: ViewerSlots, context: ChannelHandlerContext) {
        let response = api.respond(to: WebRequest(target: head.uri))
        switch response {
        case .content(let status, let contentType, let body):
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            write(context, head, HTTPResponseStatus(statusCode: status), contentType: contentType, body: buffer)
        case .file(let path, let contentType, let name):
            sendFile(context, head, path: path, contentType: contentType, name: name)
        case .madeFile(let make, let contentType, let name):
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { make() }.whenComplete { result in
                let context = bound.value
                guard case .success(let made?) = result else {
                    let body = context.channel.allocator.buffer(string: "the pcap could not be made from the capture\n")
                    return write(context, head, .notFound, contentType: "text/plain; charset=utf-8", body: body)
                }
                sendFile(context, head, path: made, contentType: contentType, name: name, removeOnceOpen: true)
            }
        case .messageFeed(let feed):
            var feed = feed
            stream(context, head, api: api, slots: slots,
                   source: EventStreamWriter.Source(poll: { feed.poll(now: $0, budget: $1) }, hasMore: { feed.hasMore },
                                                    fellBehind: { feed.fellBehind() }))
        case .sessionsFeed(let feed):
            var feed = feed
            stream(context, head, api: api, slots: slots, source: EventStreamWriter.Source(poll: { now, _ in feed.poll(now: now) }))
        }
    }

    private static func stream(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, api: WebAPI, slots: ViewerSlots,
                               source: EventStreamWriter.Source) {
        guard slots.take() else {
            let body = context.channel.allocator.buffer(string: "too many live viewers (\(slots.limit)); close one and reload\n")
            write(context, head, .serviceUnavailable, contentType: "text/plain; charset=utf-8", body: body)
            return
        }
        let limits = api.history.limits
        let interval = TimeAmount.milliseconds(Int64(limits.feedIntervalMilliseconds))
        EventStreamWriter(context: context, version: head.version, interval: interval, stallPolls: limits.viewerStallPolls,
                          bytesPerSecond: limits.maxViewerBytesPerSecond, source: source, now: api.now,
                          onEnd: { slots.release() })
            .start(sendBufferBytes: limits.viewerSendBufferBytes)
    }

    static func write(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, _ status: HTTPResponseStatus,
                      contentType: String, body: ByteBuffer, extra: [(String, String)] = []) {
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(body.readableBytes)),
                                   ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")])
        headers.add(contentsOf: extra)
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
                      promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        let channel = context.channel
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
    }

    /// `removeOnceOpen`: the file was made for this response; it is unlinked once open (the handle
    /// keeps it readable until sent), so no download leaves a file behind.
    private static func sendFile(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, path: String,
                                 contentType: String, name: String, removeOnceOpen: Bool = false) {
        let handle = try? NIOFileHandle(_deprecatedPath: path)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        if removeOnceOpen { try? FileManager.default.removeItem(atPath: path) }
        guard let handle, let size else {
            try? handle?.close()
            let body = context.channel.allocator.buffer(string: "cannot read the capture\n")
            return write(context, request, .notFound, contentType: "text/plain; charset=utf-8", body: body)
        }
        let headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(size)),
                                   ("Content-Disposition", "attachment; filename=\"\(name)\""), ("Connection", "close")])
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: request.version, status: .ok, headers: headers))),
                      promise: nil)
        let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: size)
        context.write(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
            try? handle.close()
            channel.close(promise: nil)
        }
    }
}
