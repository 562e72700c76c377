import BLIPNIO
import Foundation
import Logging
import Replication

/// What a ``Replicator`` does and where: a `ws://` or `wss://` URL of a database (Sync Gateway,
/// the embedded gateway, or the relay in front of either), direction, mode, credentials,
/// collections and filters. A plain value with defaults.
public struct ReplicatorConfiguration: Sendable {
    public enum Direction: String, Sendable, CaseIterable {
        case push, pull, pushAndPull
        var pushes: Bool { self != .pull }
        var pulls: Bool { self != .push }
    }

    /// `ws[s]://host[:port]/db` (a trailing `/_blipsync` is added when missing).
    public var url: String
    public var direction: Direction = .pushAndPull
    /// Keep replicating as either side changes until ``Replicator/stop()``.
    public var continuous = false
    /// Collections to replicate (`getCollections`, §3); empty replicates the default collection
    /// in legacy mode (getCheckpoint).
    public var collections: [CollectionPath] = []
    /// Basic-auth credentials, sent after the server's 401 challenge, as LiteCore does.
    public var username: String?
    public var password: String?
    /// Offered in this order (wire-format reference §1.2).
    public var subprotocols = ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"]
    /// Pull only documents in these channels (`sync_gateway/bychannel`).
    public var channels: [String]?
    /// Pull only these documents (subChanges `docIDs`).
    public var docIDs: [String]?
    /// Skip tombstones when pulling (`activeOnly`).
    public var activeOnly = false
    /// Push with proposeChanges from the start, as LiteCore does; otherwise send `changes` and
    /// switch to proposeChanges when the peer answers 409 (§5 "Push" step 3).
    public var proposeChanges = false
    /// The checkpoint's client ID; nil derives one from the URL and the local database.
    public var checkpointID: String?
    public var tls: BLIPClientTLS?
    public var limits = GatewayLimits.default
    public var logger = Logger(label: "blipscope.replicator")

    public init(url: String, direction: Direction = .pushAndPull, continuous: Bool = false) {
        self.url = url
        self.direction = direction
        self.continuous = continuous
    }

    struct Endpoint {
        var host: String
        var port: Int
        var path: String
        var secure: Bool
    }

    func endpoint() throws(GatewayError) -> Endpoint {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              ["ws", "wss", "http", "https"].contains(scheme), let host = components.host, !host.isEmpty else {
            throw .invalidConfiguration("\(url) is not a ws:// or wss:// URL")
        }
        let secure = scheme == "wss" || scheme == "https"
        var path = components.percentEncodedPath
        if path.hasSuffix("/") { path.removeLast() }
        if !path.hasSuffix("/_blipsync") { path += "/_blipsync" }
        guard path.split(separator: "/").count >= 2 else { throw .invalidConfiguration("\(url) names no database") }
        if let query = components.percentEncodedQuery { path += "?" + query }
        return Endpoint(host: host, port: components.port ?? (secure ? 443 : 80), path: path, secure: secure)
    }
}
