import BLIPCore
import NIOCore
import ReplicationNames

/// Removes entries from a `changes` or `proposeChanges` request by document ID, and maps the
/// receiver's reply back to the positions of the original list (replication protocol, seeds/000).
///
/// - `changes` entries are `[sequence, docID, revID, deleted?, size?]`; the reply has one item per
///   entry (an array of known ancestor revIDs = wanted, `0`/`null` = not wanted), trailing
///   not-wanted items may be omitted. A removed entry is answered `0`.
/// - `proposeChanges` entries are `[docID, revID, serverRevID?, size?]`; the reply has one status
///   per entry (`0` = send it, `304` = already known, `409` = conflict), trailing zeros may be
///   omitted. A removed entry is answered `304`, so the sender does not push it.
/// - An empty `changes` list means "caught up", so a list whose every entry is removed is never
///   forwarded: the relay answers the sender itself (``Outcome/answer(_:)``).
///
/// Kept entries are copied byte for byte. Only the top-level structure is parsed.
public struct ChangesFilter: Sendable {
    public enum Kind: Sendable {
        case changes, proposeChanges

        /// The kind for a request profile, nil for any other profile.
        public init?(profile: String?) {
            switch profile.flatMap(ReplicationProfile.init(rawValue:)) {
            case .changes: self = .changes
            case .proposeChanges: self = .proposeChanges
            default: return nil
            }
        }

        var docIDIndex: Int { self == .changes ? 1 : 0 }
        /// The reply item that tells the sender not to send a removed entry.
        var removedReply: String { self == .changes ? "0" : "304" }
    }

    public enum Outcome: Sendable {
        /// Nothing removed: forward unchanged.
        case unchanged
        /// Forward `body` instead; map the reply back with `replyRewrite`.
        case filtered(body: ByteBuffer, replyRewrite: ReplyRewrite, kept: [Int], originalCount: Int)
        /// Every entry removed: answer the sender with this reply body.
        case answer(ByteBuffer)
    }

    public let kind: Kind

    public init(kind: Kind) { self.kind = kind }

    /// Filters `body`, keeping the entries whose document ID `keep` accepts.
    public func filter(_ body: ByteBuffer, keep: (String) -> Bool) throws(ChangesFilterError) -> Outcome {
        let scanner = JSONArrayScanner(bytes: Array(body.readableBytesView))
        let entries = try scanner.elements(at: 0).elements
        var kept: [Int] = []
        for (position, entry) in entries.enumerated() {
            let fields = try scanner.elements(at: entry.lowerBound).elements
            guard fields.count > kind.docIDIndex, let docID = scanner.string(fields[kind.docIDIndex]) else {
                throw ChangesFilterError("entry \(position) has no document ID")
            }
            if keep(docID) { kept.append(position) }
        }
        if kept.count == entries.count { return .unchanged }
        if kept.isEmpty && !entries.isEmpty {
            return .answer(Self.array(entries.map { _ in kind.removedReply }, trimming: kind == .changes))
        }
        var filtered = ByteBuffer()
        filtered.writeString("[")
        for (index, position) in kept.enumerated() {
            if index > 0 { filtered.writeString(",") }
            filtered.writeBytes(scanner.bytes[entries[position]])
        }
        filtered.writeString("]")
        let rewrite = Self.replyRewrite(kind: kind, kept: kept, originalCount: entries.count)
        return .filtered(body: filtered, replyRewrite: rewrite, kept: kept, originalCount: entries.count)
    }

    /// The reply mapping for a request cut down to the entries at `kept` of `originalCount`.
    public static func replyRewrite(kind: Kind, kept: [Int], originalCount: Int) -> ReplyRewrite {
        let profile = kind == .changes ? ReplicationProfile.changes : .proposeChanges
        return ReplyRewrite(name: "\(profile.rawValue) \(kept.count)/\(originalCount)") { reply in
            let scanner = JSONArrayScanner(bytes: Array(reply.readableBytesView))
            let items: [Range<Int>]
            do { items = try scanner.elements(at: 0).elements } catch { throw error }
            guard items.count <= kept.count else {
                throw ChangesFilterError("reply has \(items.count) items for \(kept.count) entries")
            }
            var mapped = [String](repeating: kind.removedReply, count: originalCount)
            for (index, position) in kept.enumerated() {
                // An omitted trailing item means 0 for both kinds.
                mapped[position] = index < items.count ? String(decoding: scanner.bytes[items[index]], as: UTF8.self) : "0"
            }
            return array(mapped, trimming: kind == .changes)
        }
    }

    /// A JSON array of raw items; for `changes` replies trailing not-wanted items are omitted.
    static func array(_ items: [String], trimming: Bool) -> ByteBuffer {
        var items = items
        if trimming { while let last = items.last, last == "0" || last == "null" { items.removeLast() } }
        var buffer = ByteBuffer()
        buffer.writeString("[" + items.joined(separator: ",") + "]")
        return buffer
    }
}

extension ChangesFilter {
    /// The body verdict for a `changes`/`proposeChanges` request: pass when nothing is removed,
    /// replace with the filtered list (compressed like the original) and its reply mapping, or
    /// answer the sender when nothing is left. A body that cannot be parsed is passed unchanged.
    public static func decision(for message: BLIPMessage, rule: String?, keep: (String) -> Bool) -> BodyDecision {
        guard let kind = Kind(profile: message.profile) else { return .pass }
        do {
            switch try ChangesFilter(kind: kind).filter(message.body, keep: keep) {
            case .unchanged:
                return .pass
            case .filtered(let body, let rewrite, _, _):
                return BodyDecision(.replace(properties: message.properties, body: body, compressed: message.isCompressed,
                                             replyRewrite: rewrite), rule: rule)
            case .answer(let body):
                return BodyDecision(.answer(properties: [:], body: body), rule: rule)
            }
        } catch {
            return .pass
        }
    }
}
