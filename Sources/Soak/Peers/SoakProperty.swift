/// The properties soak peers put on their messages, so the other end can check each one.
enum SoakProperty {
    /// Request: the sending session's identifier.
    static let session = "soak-session"
    /// Request and reply: the request's number in its session, from 1, in queueing order.
    static let number = "soak-seq"
    /// Request: the body's length in bytes.
    static let length = "soak-len"
    /// Request: the body's pool (``SoakBodies/Pool``).
    static let pool = "soak-pool"
    /// Reply: the reply's number among the echo server's replies on this session, from 1, in
    /// queueing order (what the client checks the replies' order with).
    static let replyNumber = "soak-rseq"
}
