import NIOCore

/// How the relay turns the reply to a request it rewrote back into the reply the original
/// request's sender expects (for example, the positions of a filtered `changes` list).
///
/// The function gets the reply body as the receiver sent it (uncompressed) and returns the body to
/// forward; throwing makes the relay answer the requester with an ERR instead (HTTP 502), since a
/// reply whose positions do not match the request would mislead it. ERR replies are not rewritten.
public struct ReplyRewrite: Sendable {
    public var name: String
    public var rewriteBody: @Sendable (ByteBuffer) throws -> ByteBuffer

    public init(name: String, rewriteBody: @escaping @Sendable (ByteBuffer) throws -> ByteBuffer) {
        self.name = name
        self.rewriteBody = rewriteBody
    }
}
