import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Stand-ins for browsers on the relay's web view during `bench relay --viewers N`: each viewer
/// keeps the sessions feed (`/api/events`) open, as the sessions page does, and follows every
/// live session it sees there with that session's message feed, as an open messages page does
/// (more than one person watches). What they receive is read and dropped.
final class WebViewers: Sendable {
    let port: Int
    private let group: any EventLoopGroup
    private let followed = NIOLockedValueBox<Set<String>>([])
    private let channels = NIOLockedValueBox<[any Channel]>([])
    private let bytes = NIOLockedValueBox(0)

    init(count: Int, port: Int, group: any EventLoopGroup) async throws {
        self.port = port
        self.group = group
        // The relay announces its listener before its admin listener is bound: retry, briefly.
        for attempt in 0..<50 {
            do {
                try await open("/api/events", viewer: 0)
                break
            } catch where attempt < 49 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        for viewer in 1..<max(1, count) { try await open("/api/events", viewer: viewer) }
    }

    /// Bytes the viewers received so far.
    var received: Int { bytes.withLockedValue { $0 } }

    /// Message feeds the viewers opened so far (one per viewer and live session it followed).
    var followedFeeds: Int { followed.withLockedValue { $0.count } }

    /// `path` is the sessions feed (read as text, to follow what it lists) or a message feed
    /// (only counted: a viewer's browser usually runs on another machine, so the stand-in should
    /// take as little of the peers' CPU as it can).
    private func open(_ path: String, viewer: Int) async throws {
        let reader = path == "/api/events"
            ? FeedReader(onText: { [weak self] text in self?.read(text, viewer: viewer) })
            : FeedReader(onBytes: { [weak self] count in self?.bytes.withLockedValue { $0 += count } })
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in channel.pipeline.addHandler(reader) }
            .connect(host: "127.0.0.1", port: port).get()
        channels.withLockedValue { $0.append(channel) }
        try await channel.writeAndFlush(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).get()
    }

    private static let liveSession = try! NSRegularExpression(pattern: #"\{"id":(\d+),"client":[^{]*?"live":true"#)

    private func read(_ text: String, viewer: Int) {
        bytes.withLockedValue { $0 += text.utf8.count }
        guard text.contains("event: sessions") else { return }
        let range = NSRange(text.startIndex..., in: text)
        for match in Self.liveSession.matches(in: text, range: range) {
            guard let idRange = Range(match.range(at: 1), in: text) else { continue }
            let key = "\(viewer)/\(text[idRange])"
            guard followed.withLockedValue({ $0.insert(key).inserted }) else { continue }
            let path = "/api/sessions/\(text[idRange])/events?after=-1"
            Task { try? await self.open(path, viewer: viewer) }
        }
    }

    func close() {
        for channel in channels.withLockedValue({ $0 }) { channel.close(promise: nil) }
    }

    /// A free loopback port for the relay's admin listener (bound, read, released).
    static func freePort() throws -> Int {
        let socket = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = socket.localAddress!.port!
        try socket.close().wait()
        return port
    }
}

/// Hands each piece of a feed's text to a closure (a Server-Sent Events event may span reads;
/// the sessions event is small enough that the viewers' coarse parsing loses at most a follow).
private final class FeedReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let onText: ((String) -> Void)?
    let onBytes: ((Int) -> Void)?
    private var pending = ""

    init(onText: @escaping (String) -> Void) { self.onText = onText; self.onBytes = nil }
    init(onBytes: @escaping (Int) -> Void) { self.onText = nil; self.onBytes = onBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let onText else { return onBytes?(buffer.readableBytes) ?? () }
        pending += buffer.readString(length: buffer.readableBytes) ?? ""
        // Whole events only: up to the last blank line.
        guard let end = pending.range(of: "\n\n", options: .backwards) else { return }
        let complete = String(pending[..<end.upperBound])
        pending = String(pending[end.upperBound...])
        onText(complete)
    }
}
