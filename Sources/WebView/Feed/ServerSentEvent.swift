/// One Server-Sent Event in its text form (HTML Living Standard §9.2): `event:` and one `data:`
/// line per line of the data, then a blank line.
public struct ServerSentEvent: Sendable, Equatable {
    public var event: String
    public var data: String

    public init(event: String, data: String) {
        self.event = event
        self.data = data
    }

    public var text: String {
        var text = "event: \(event)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    /// A comment line: keeps idle connections open through proxies; browsers ignore it.
    public static let keepAlive = ": keep-alive\n\n"
}
