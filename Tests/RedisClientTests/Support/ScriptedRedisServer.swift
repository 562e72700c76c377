import NIOCore
import NIOPosix
import RedisClient

/// A loopback TCP server that speaks just enough RESP to be a broken or hostile Redis: it
/// reads each command (an array of bulk strings, read with ``RESPParser``) and answers with the
/// bytes `reply` returns for it, which may be anything, or closes the connection when it returns nil.
final class ScriptedRedisServer: Sendable {
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    /// `reply` gets the command's name and arguments as text, and the command's number on its
    /// connection (0 is the handshake's PING).
    init(reply: @escaping @Sendable (_ command: [String], _ number: Int) -> [UInt8]?) async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(reply: reply))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async { try? await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let reply: @Sendable ([String], Int) -> [UInt8]?
        var parser = RESPParser()
        var count = 0

        init(reply: @escaping @Sendable ([String], Int) -> [UInt8]?) { self.reply = reply }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            parser.append(unwrapInboundIn(data))
            while let command = try? parser.next() {
                let words = (command.array ?? []).map { $0.string ?? "" }
                defer { count += 1 }
                guard let bytes = reply(words, count) else {
                    context.close(promise: nil)
                    return
                }
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
            }
        }
    }
}
