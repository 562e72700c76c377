/// The ERR reply the relay sends in a peer's place (wire-format reference §6): `Error-Domain`,
/// `Error-Code` and the message as the body. The domain defaults to `HTTP`, as Sync Gateway
/// uses for every handler failure, and the code to 403 (forbidden).
public struct ErrorReply: Sendable, Equatable {
    public var domain: String
    public var code: Int
    public var message: String

    public init(domain: String = "HTTP", code: Int = 403, message: String = "") {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
