import NIOCore
import NIOPosix

/// Fetches `/metrics` from the relay's admin listener: a plain HTTP/1.1 GET on loopback with
/// `Connection: close`, the answer collected until the server closes. Bounded by `timeout`.
enum MetricsScrape {
    static func fetch(port: Int, group: EventLoopGroup, timeout: TimeAmount = .seconds(10)) async throws -> MetricsText {
        let loop = group.next()
        let done = loop.makePromise(of: [UInt8].self)
        let deadline = loop.scheduleTask(in: timeout) { done.fail(SoakError("the relay's admin listener did not answer /metrics in time")) }
        defer { deadline.cancel() }
        do {
            let channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in channel.pipeline.addHandler(ResponseCollector(done: done)) }
                .connect(host: "127.0.0.1", port: port).get()
            let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
            try await channel.writeAndFlush(ByteBuffer(string: request)).get()
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        } catch {
            done.fail(error)
        }
        let text = String(decoding: try await done.futureResult.get(), as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let split = text.range(of: "\r\n\r\n") else {
            throw SoakError("the relay's /metrics answered: \(text.prefix(200))")
        }
        var body = String(text[split.upperBound...])
        if text[..<split.lowerBound].lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
        return MetricsText(body)
    }

    private static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var out = ""
        while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
            let start = line.upperBound
            guard let end = rest.utf8.index(start, offsetBy: size, limitedBy: rest.endIndex) else { break }
            out += rest[start..<end]
            rest = rest[end...].dropFirst(2)
        }
        return out
    }

    private final class ResponseCollector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private var bytes: [UInt8] = []
        let done: EventLoopPromise<[UInt8]>

        init(done: EventLoopPromise<[UInt8]>) { self.done = done }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
        }

        func channelInactive(context: ChannelHandlerContext) { done.succeed(bytes) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            done.fail(error)
            context.close(promise: nil)
        }
    }
}
