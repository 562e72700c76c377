import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@testable import Relay

/// A loopback TCP forwarder that records every byte it carries, each way: put between two peers
/// to see exactly what crossed the wire.
final class TCPTap: Sendable {
    let port: Int
    private let channel: Channel
    /// Where accepted connections are forwarded; may be set after the tap is listening.
    let targetPort: NIOLockedValueBox<Int>
    /// Bytes from the accepting side to the target, and back.
    let forward: NIOLockedValueBox<ByteBuffer>
    let backward: NIOLockedValueBox<ByteBuffer>
    /// Completes when both sockets of the (first) forwarded connection have closed: after that
    /// the recordings are final.
    let closed: EventLoopFuture<Void>

    /// Puts the tap between a relay and its upstream: the relay dials the tap, which forwards to
    /// the upstream `configuration` named.
    func interpose(upstreamOf configuration: inout RelayConfiguration) {
        targetPort.withLockedValue { $0 = configuration.upstream.defaultUpstream!.port }
        configuration.upstream = .single(UpstreamURL("ws://127.0.0.1:\(port)")!)
    }

    /// - Parameter prelude: bytes written to the target before anything of each accepted
    ///   connection (a load balancer's PROXY header), made from the accepted channel.
    static func start(group: EventLoopGroup, targetPort: Int = 0,
                      prelude: @escaping @Sendable (Channel) -> [UInt8] = { _ in [] }) async throws -> TCPTap {
        let target = NIOLockedValueBox(targetPort)
        let closedPromise = group.next().makePromise(of: Void.self)
        let forward = NIOLockedValueBox(ByteBuffer())
        let backward = NIOLockedValueBox(ByteBuffer())
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: target.withLockedValue { $0 })
                    .flatMap { outbound in
                        let first = prelude(inbound)
                        if !first.isEmpty { outbound.writeAndFlush(ByteBuffer(bytes: first), promise: nil) }
                        inbound.closeFuture.and(outbound.closeFuture).whenComplete { _ in closedPromise.succeed(()) }
                        return inbound.eventLoop.makeCompletedFuture {
                            try inbound.pipeline.syncOperations.addHandler(Pipe(partner: outbound, record: forward))
                            try outbound.pipeline.syncOperations.addHandler(Pipe(partner: inbound, record: backward))
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TCPTap(port: channel.localAddress!.port!, channel: channel, targetPort: target,
                      forward: forward, backward: backward, closed: closedPromise.futureResult)
    }

    private init(port: Int, channel: Channel, targetPort: NIOLockedValueBox<Int>,
                 forward: NIOLockedValueBox<ByteBuffer>, backward: NIOLockedValueBox<ByteBuffer>,
                 closed: EventLoopFuture<Void>) {
        self.closed = closed
        self.port = port
        self.channel = channel
        self.targetPort = targetPort
        self.forward = forward
        self.backward = backward
    }

    func close() async throws { try await channel.close() }

    /// The bytes after the HTTP upgrade (the WebSocket stream) in one direction.
    static func webSocketBytes(_ stream: ByteBuffer) -> [UInt8] {
        let bytes = Array(stream.readableBytesView)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= 4 else { return [] }
        for index in 0...(bytes.count - 4) where Array(bytes[index..<index + 4]) == separator {
            return Array(bytes[(index + 4)...])
        }
        return []
    }

    /// Copies bytes to the partner channel, recording them; closes the partner on close.
    private final class Pipe: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let partner: Channel
        let record: NIOLockedValueBox<ByteBuffer>

        init(partner: Channel, record: NIOLockedValueBox<ByteBuffer>) {
            self.partner = partner
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            record.withLockedValue { _ = $0.writeImmutableBuffer(buffer) }
            partner.writeAndFlush(buffer, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }
}
