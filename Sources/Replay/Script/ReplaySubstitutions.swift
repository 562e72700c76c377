import BLIPCore
import Foundation
import NIOCore
import Replication

/// What a replay changes in what it sends, so a recorded session can run under other
/// credentials or without reusing a checkpoint.
///
/// - Handshake: request headers named here replace (or add to) the recorded ones; a header the
///   relay redacted (``redactedMarker``) is never sent. `Host`, `Upgrade`, `Connection`,
///   `Content-Length` and the `Sec-WebSocket-*` headers are the connection's own, never copied.
/// - Checkpoint client ID: the `client` property of `getCheckpoint`/`setCheckpoint` and every
///   entry of `checkpoint_ids` in a `getCollections` body (replication-protocol §3) become
///   ``clientID``. One new ID for all recorded IDs: the peer keys checkpoints per collection.
/// - `since` of `subChanges`, when ``since`` is set (start pulling from another sequence).
public struct ReplaySubstitutions: Sendable {
    /// Headers to send instead of (or in addition to) the recorded ones.
    public var headers: [(name: String, value: String)] = []
    public var clientID: String?
    public var since: String?

    /// What the relay writes in place of a secret (see `HeaderRedaction`).
    public static let redactedMarker = "<redacted>"
    static let connectionHeaders: Set<String> = ["host", "upgrade", "connection", "content-length"]

    public init(headers: [(name: String, value: String)] = [], clientID: String? = nil, since: String? = nil) {
        self.headers = headers
        self.clientID = clientID
        self.since = since
    }

    /// Basic credentials as an `Authorization` header.
    public mutating func setCredentials(user: String, password: String) {
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        setHeader(name: "Authorization", value: "Basic \(token)")
    }

    public mutating func setHeader(name: String, value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    /// The headers to dial with: recorded ones the connection does not own, unredacted,
    /// not overridden; then the overrides.
    public func handshakeHeaders(recorded: [(name: String, value: String)]) -> [(name: String, value: String)] {
        let overridden = Set(headers.map { $0.name.lowercased() })
        let kept = recorded.filter { field in
            let name = field.name.lowercased()
            return !Self.connectionHeaders.contains(name) && !name.hasPrefix("sec-websocket-")
                && !overridden.contains(name) && !field.value.contains(Self.redactedMarker)
        }
        return kept + headers
    }

    /// `request` as it is to be sent.
    public func apply(to request: BLIPMessage) -> BLIPMessage {
        var message = request
        switch request.profile {
        case ReplicationProfile.getCheckpoint.rawValue, ReplicationProfile.setCheckpoint.rawValue:
            if let clientID, request.properties[.client] != nil { message.properties[.client] = clientID }
        case ReplicationProfile.getCollections.rawValue:
            if let clientID { message.body = replacingCheckpointIDs(in: request.body, with: clientID) }
        case ReplicationProfile.subChanges.rawValue:
            if let since { message.properties[.since] = since }
        default:
            break
        }
        return message
    }

    private func replacingCheckpointIDs(in body: ByteBuffer, with id: String) -> ByteBuffer {
        guard let json = JSONValue(parsing: body), var members = json.objectValue,
              let ids = members["checkpoint_ids"]?.arrayValue else { return body }
        members["checkpoint_ids"] = .array(ids.map { _ in .string(id) })
        return ByteBuffer(string: JSONValue.object(members).description)
    }
}
