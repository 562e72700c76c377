/// An ERR reply's content (wire-format reference §6): `Error-Domain`, `Error-Code` and the
/// message as the body. One type for every module that reads or writes one: the analyzer reads
/// peers' ERRs, policy rules name the ERR to answer with, the mediator sends it. The domain
/// defaults to `HTTP`, which Sync Gateway uses for every handler failure, and the code to 403.
public struct ErrorReply: Sendable, Equatable {
    public var domain: String
    public var code: Int
    public var message: String

    public init(domain: String = "HTTP", code: Int = 403, message: String = "") {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// `HTTP 409`: the key errors are counted under.
    public var key: String { "\(domain) \(code)" }
}
