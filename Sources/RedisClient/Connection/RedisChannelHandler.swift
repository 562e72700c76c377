import Logging
import NIOCore

/// The NIO shell of one Redis connection: encodes each ``RedisRequest``'s command, feeds every
/// read to a ``RESPParser``, and lets a ``RedisPipeline`` match replies with commands, arming a
/// timer per command. Its only state is those two machines; it does what they answer.
///
/// Whatever ends the connection (a protocol violation, a crossed limit, a timeout, the server
/// closing, the owner closing) fails every waiting command, closes the channel, and completes
/// ``ended`` with the reason, which the owner logs.
final class RedisChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    /// A command on the wire, waiting for its reply.
    final class Waiter {
        let name: String
        let timeout: TimeAmount
        let reply: EventLoopPromise<RESPValue>
        var timer: Scheduled<Void>?

        init(_ request: RedisRequest) {
            name = request.command.name
            timeout = request.timeout
            reply = request.reply
        }

        func fail(_ error: RedisError) {
            timer?.cancel()
            reply.fail(error)
        }
    }

    private var parser: RESPParser
    private var pipeline: RedisPipeline<Waiter>
    private var context: ChannelHandlerContext?
    /// Completed, when the channel has closed, with why it did.
    let ended: EventLoopPromise<RedisError>

    init(limits: RedisLimits, ended: EventLoopPromise<RedisError>) {
        parser = RESPParser(limits: limits)
        pipeline = RedisPipeline(maxPendingCommands: limits.maxPendingCommands)
        self.ended = ended
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(.closed("the connection's handler was removed"), failingWith: nil)
        self.context = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        let waiter = Waiter(request)
        switch pipeline.send(waiter) {
        case let .fail(waiter, error):
            waiter.fail(error)
            promise?.fail(error)
        case let .write(id):
            waiter.timer = context.eventLoop.assumeIsolated().scheduleTask(in: request.timeout) { [self] in
                deadlinePassed(id: id)
            }
            var bytes = context.channel.allocator.buffer(capacity: request.command.encodedLength)
            request.command.encode(into: &bytes)
            context.write(wrapOutboundOut(bytes), promise: promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.append(unwrapInboundIn(data))
        do {
            while let value = try parser.next() {
                switch pipeline.receive() {
                case let .answer(waiter):
                    waiter.timer?.cancel()
                    if case let .error(message) = value {
                        waiter.reply.fail(RedisError.serverError(message))
                    } else {
                        waiter.reply.succeed(value)
                    }
                case let .close(error):
                    end(error, failingWith: nil)
                    return
                case .ignore:
                    return
                }
            }
        } catch {
            end(error, failingWith: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.closed("the server closed the connection"), failingWith: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(error as? RedisError ?? .closed("\(error)"), failingWith: nil)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        end(.shutDown, failingWith: nil, closing: false)
        context.close(mode: mode, promise: promise)
    }

    private func deadlinePassed(id: UInt64) {
        guard let waiter = pipeline.deadlinePassed(id: id) else { return }
        let error = RedisError.timedOut(waiter.name, after: waiter.timeout)
        waiter.fail(error)
        end(error, failingWith: .closed("an earlier command (\(waiter.name)) got no reply in time"))
    }

    /// Ends the connection once: fails every waiting command with `waiterError` (or the
    /// reason), drops the parser's bytes, closes the channel and reports the reason.
    private func end(_ reason: RedisError, failingWith waiterError: RedisError?, closing: Bool = true) {
        let first = pipeline.closure == nil
        let waiters = pipeline.close(reason)
        for waiter in waiters { waiter.fail(waiterError ?? reason) }
        guard first else { return }
        parser = RESPParser(limits: parser.limits)
        ended.succeed(reason)
        if closing { context?.close(promise: nil) }
    }
}
