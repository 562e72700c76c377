import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A plain HTTP/1.1 GET over loopback for admin and Prometheus API tests: sends the request with
/// `Connection: close` and collects the answer until the server closes. Bounded by `withTimeout`.
/// `trusting`: https, verifying the server against this PEM CA (or self-signed certificate) file.
func httpGet(port: Int, path: String, headers: [(String, String)] = [], trusting caPath: String? = nil,
             group: any EventLoopGroup) async throws -> (status: Int, body: String) {
    let tls = try caPath.map { path in
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
        return try NIOSSLContext(configuration: configuration)
    }
    return try await withTimeout {
        let collector = ResponseCollector()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                        }
                        try channel.pipeline.syncOperations.addHandler(collector)
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
        } catch {
            collector.done.fail(error)  // nothing will complete it otherwise
            throw error
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        let text = try await collector.done.futureResult.get()
        guard let split = text.range(of: "\r\n\r\n"),
              let status = Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "")
        else { return (0, text) }
        var body = String(text[split.upperBound...])
        if text[..<split.lowerBound].lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
        return (status, body)
    }
}

private func dechunk(_ text: String) -> String {
    var rest = Substring(text)
    var out = ""
    while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
        let start = line.upperBound
        let end = rest.utf8.index(start, offsetBy: size)
        out += rest[start..<end]
        rest = rest[end...].dropFirst(2)
    }
    return out
}

private final class ResponseCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var bytes: [UInt8] = []
    let done: EventLoopPromise<String>

    init() {
        done = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: String.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed(String(decoding: bytes, as: UTF8.self))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS server that closes without close_notify after a whole answer: the answer stands.
        if !bytes.isEmpty, case NIOSSLError.uncleanShutdown? = error as? NIOSSLError { return }
        done.fail(error)
        context.close(promise: nil)
    }
}
