import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A client that writes an upgrade request as exact text (header spelling, order, tokens) and
/// reads the answer's head: for checking what crosses a hop to the letter.
struct RawUpgradeClient {
    let channel: Channel
    private let head: EventLoopFuture<String>

    /// Connects, writes `request` and returns at once; ``responseHead()`` waits for the answer.
    static func send(_ request: String, port: Int, group: any EventLoopGroup) async throws -> RawUpgradeClient {
        let promise = group.next().makePromise(of: String.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { $0.pipeline.addHandler(HeadCollector(done: promise)) }
            .connect(host: "127.0.0.1", port: port).get()
        channel.closeFuture.whenComplete { _ in promise.fail(ChannelError.ioOnClosedChannel) }
        // The server may have answered and closed already (a timeout that beat a loaded test): its
        // answer is still read.
        try? await channel.writeAndFlush(ByteBuffer(string: request)).get()
        return RawUpgradeClient(channel: channel, head: promise.futureResult)
    }

    /// The response's status line and header lines, without the blank line (bounded wait).
    func responseHead() async throws -> [String] {
        let head = self.head
        return try await withTimeout { try await head.get() }.components(separatedBy: "\r\n")
    }

    /// The header lines of an HTTP head given as raw bytes, up to the blank line.
    static func headLines(of stream: ByteBuffer) -> [String] {
        let text = String(decoding: stream.readableBytesView, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return [] }
        return text[..<end.lowerBound].components(separatedBy: "\r\n")
    }
}

private final class HeadCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var bytes: [UInt8] = []
    private let done: EventLoopPromise<String>

    init(done: EventLoopPromise<String>) { self.done = done }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
        let text = String(decoding: bytes, as: UTF8.self)
        if let end = text.range(of: "\r\n\r\n") { done.succeed(String(text[..<end.lowerBound])) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let end = text.range(of: "\r\n\r\n") { done.succeed(String(text[..<end.lowerBound])) }
        context.fireChannelInactive()
    }
}
