import BLIPCore
import BLIPNIO
import Foundation
import Logging
import Replication

/// How to run the embedded gateway (`blipscope gateway`): where it listens, its databases, who
/// may log in, which sub-protocols it speaks, and its limits. A plain value with defaults.
public struct GatewayConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port; ``GatewayServer/port`` tells which.
    public var port = 4984
    /// Served at `/{name}/_blipsync`.
    public var databases: [GatewayDatabase]
    /// Basic-auth users (name → password). Empty: everyone is let in as a guest.
    public var users: [String: String] = [:]
    /// The realm of the `WWW-Authenticate` challenge sent with 401.
    public var realm = "Couchbase Sync Gateway"
    /// Sub-protocols spoken, newest first (wire-format reference §1.2). As Sync Gateway (go-blip)
    /// chooses, the first of the client's list that is spoken here wins; LiteCore and Sync Gateway
    /// list their newest first, so they get the newest both speak. CBMobile_4 adds version vectors.
    public var subprotocols = ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"]
    /// Conflict-free mode, as modern Sync Gateway runs: `changes` gets 409 so clients use
    /// proposeChanges, and every incoming rev is checked as if `noconflicts` were set.
    public var conflictFree = true
    public var limits = GatewayLimits.default
    public var blipLimits = BLIPLimits.default
    /// Serve wss instead of ws.
    public var tls: BLIPServerTLS?
    public var logger = Logger(label: "blipscope.gateway")
    /// Where the gateway writes, as Sync Gateway does, one line per replication request it
    /// handles, in Sync Gateway's format (``SyncGatewayStyleLog``); nil: not written.
    public var syncGatewayLog: (@Sendable (String) -> Void)?

    public init(databases: [GatewayDatabase] = [GatewayDatabase(name: "db")]) {
        self.databases = databases
    }

    public func database(named name: String) -> GatewayDatabase? { databases.first { $0.name == name } }

    /// Reads users from a JSON file shaped like Sync Gateway's config:
    /// `{"users": {"alice": {"password": "…"}, …}}` (a bare `{"alice": "…"}` map works too).
    public static func loadUsers(from path: String) throws(GatewayError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidConfiguration("cannot read users file \(path)")
        }
        let json = try JSONValue.parse(String(decoding: data, as: UTF8.self), what: "users file \(path)")
        guard let entries = (json["users"] ?? json).objectValue else {
            throw .invalidConfiguration("users file \(path) should hold an object of users")
        }
        var users: [String: String] = [:]
        for (name, entry) in entries {
            guard let password = entry.stringValue ?? entry["password"]?.stringValue else {
                throw .invalidConfiguration("user \(name) in \(path) has no password")
            }
            users[name] = password
        }
        return users
    }
}
