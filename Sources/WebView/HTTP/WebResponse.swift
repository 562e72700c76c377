/// What the web view answers to one request: content, a live feed, or a file to send.
public enum WebResponse: Sendable {
    case content(status: Int, contentType: String, body: [UInt8])
    /// A Server-Sent Events stream of one session's messages.
    case messageFeed(MessageFeed)
    /// A Server-Sent Events stream of the sessions list.
    case sessionsFeed(SessionsFeed)
    /// A file sent as an attachment named `name`.
    case file(path: String, contentType: String, name: String)
    /// A file made on request (a pcap from a capture): `make` reads and writes files, so the
    /// responder runs it on a thread pool, never on an event loop the relay's sessions share. The
    /// file is the response's own: the responder removes it once open (it is sent from the handle).
    case madeFile(make: @Sendable () -> String?, contentType: String, name: String)

    static func json(_ text: String) -> WebResponse {
        .content(status: 200, contentType: "application/json; charset=utf-8", body: Array(text.utf8))
    }

    static func notFound(_ what: String) -> WebResponse {
        .content(status: 404, contentType: "text/plain; charset=utf-8", body: Array("\(what)\n".utf8))
    }
}
