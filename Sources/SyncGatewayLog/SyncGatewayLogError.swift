/// Why Sync Gateway's log could not be read: the file and the cause, in words.
public struct SyncGatewayLogError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "Sync Gateway log \(path): \(reason)" }
}
