import BLIPCore
import NIOCore
import Replication

/// Compares a recorded reply with the new one for the same request and lists the differences,
/// each marked with the allowance that permits it (``ReplayAllowances``).
///
/// Paths: `reply` (one side has no reply), `type` (RPY vs ERR), `error.domain` and `error.code`
/// (`Error-Domain`/`Error-Code`, wire-format reference §6), `properties.<name>` for any other
/// property, then the body: JSON bodies are compared member by member (`body.remote`,
/// `body[2][0]`, see ``JSONDiff``); other bodies only as a whole (`body`).
public struct ReplyComparator: Sendable {
    public let allowances: ReplayAllowances
    /// Longest text shown for a non-JSON body that differs.
    public var maxBodyPreview = 80

    public init(allowances: ReplayAllowances) { self.allowances = allowances }

    public func entry(for scripted: ScriptedRequest, newReply: BLIPMessage?, sent: Bool) -> ReplayReport.Entry {
        let profile = scripted.profile
        var entry = ReplayReport.Entry(
            index: scripted.index, profile: profile, recordedNumber: UInt64(scripted.request.number),
            recordedStatus: Self.status(scripted.recordedReply, noReply: scripted.request.isNoReply),
            newStatus: sent ? Self.status(newReply, noReply: scripted.request.isNoReply) : "not sent",
            differences: [])
        guard let recorded = scripted.recordedReply else { return entry }
        let changes: [JSONDiff.Change]
        if let newReply { changes = differences(recorded, newReply) } else {
            changes = [JSONDiff.Change(path: "reply", old: Self.status(recorded, noReply: false), new: nil)]
        }
        entry.differences = changes.map { change in
            ReplayReport.Difference(path: change.path, old: change.old, new: change.new,
                                    allowedBy: allowances.allowance(profile: profile, path: change.path))
        }
        return entry
    }

    /// `RPY`, `ERR <domain>/<code>`, `noreply` or `none`.
    public static func status(_ reply: BLIPMessage?, noReply: Bool) -> String {
        guard let reply else { return noReply ? "noreply" : "none" }
        if reply.type == .error {
            return "ERR \(reply.properties[.errorDomain] ?? "?")/\(reply.properties[.errorCode] ?? "?")"
        }
        return "RPY"
    }

    func differences(_ old: BLIPMessage, _ new: BLIPMessage) -> [JSONDiff.Change] {
        var changes: [JSONDiff.Change] = []
        if old.type != new.type {
            changes.append(.init(path: "type", old: Self.typeName(old.type), new: Self.typeName(new.type)))
        }
        for (name, path) in [(PropertyName.errorDomain, "error.domain"), (.errorCode, "error.code")] {
            let left = old.properties[name], right = new.properties[name]
            if left != right { changes.append(.init(path: path, old: left, new: right)) }
        }
        let names = Set(old.properties.map(\.key)).union(new.properties.map(\.key))
            .subtracting([PropertyName.errorDomain.rawValue, PropertyName.errorCode.rawValue]).sorted()
        for name in names where old.properties[name] != new.properties[name] {
            changes.append(.init(path: "properties.\(name)", old: old.properties[name], new: new.properties[name]))
        }
        changes += bodyDifferences(old.body, new.body)
        return changes
    }

    private func bodyDifferences(_ old: ByteBuffer, _ new: ByteBuffer) -> [JSONDiff.Change] {
        guard old != new else { return [] }
        if let left = JSONValue(parsing: old), let right = JSONValue(parsing: new) {
            return JSONDiff.changes(from: left, to: right, root: "body")
        }
        return [JSONDiff.Change(path: "body", old: preview(old), new: preview(new))]
    }

    private func preview(_ body: ByteBuffer) -> String {
        guard body.readableBytes > 0 else { return "(empty)" }
        guard let text = body.getString(at: body.readerIndex, length: body.readableBytes),
              !text.contains("\u{FFFD}") else { return "<\(body.readableBytes) bytes>" }
        return text.count > maxBodyPreview ? String(text.prefix(maxBodyPreview)) + "… (\(body.readableBytes) bytes)" : text
    }

    private static func typeName(_ type: MessageType) -> String {
        switch type {
        case .response: return "RPY"
        case .error: return "ERR"
        default: return "\(type)"
        }
    }
}
