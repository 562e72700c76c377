import Foundation
import NIOConcurrencyHelpers

/// The policy in force: the message-rule ``PolicyEngine`` and the ``ConnectionPolicy`` built
/// from the current file, swapped as a whole on reload. Token buckets, `limit` counts and open
/// session counts live in one ``PolicyState`` that outlives reloads, so a rule whose name is
/// unchanged keeps its state (with its new parameters), and the state of removed rules is
/// dropped. A file that fails to load leaves the previous policy in force; live sessions are
/// untouched either way (they ask ``engine`` per message and get the current one).
public final class PolicyStore: Sendable {
    /// The file it loads from; nil for a store made from a document.
    public let path: String?
    public let dryRun: Bool
    public let state: PolicyState
    private let current: NIOLockedValueBox<Current>

    private struct Current {
        var engine: PolicyEngine
        var connections: ConnectionPolicy
        /// The file's bytes at the last load attempt (successful or not).
        var lastSeen: Data?
        /// The last poll could not read the file (reported once).
        var readFailed = false
    }

    /// Loads `path`; throws its first error (naming rule and field).
    public init(path: String, dryRun: Bool = false, state: PolicyState = PolicyState()) throws(PolicyError) {
        let data = try Self.read(path)
        let document = try PolicyDocument(yaml: String(decoding: data, as: UTF8.self))
        try Self.checkScopes(document, state: state)
        self.path = path
        self.dryRun = dryRun
        self.state = state
        current = NIOLockedValueBox(Self.build(document, state: state, dryRun: dryRun, seen: data))
    }

    /// A store over a parsed document (tests, programmatic use); ``reload()`` then does nothing.
    public init(document: PolicyDocument, dryRun: Bool = false, state: PolicyState = PolicyState()) {
        path = nil
        self.dryRun = dryRun
        self.state = state
        current = NIOLockedValueBox(Self.build(document, state: state, dryRun: dryRun, seen: nil))
    }

    /// The message rules in force.
    public var engine: PolicyEngine { current.withLockedValue { $0.engine } }
    /// The connection rules in force.
    public var connections: ConnectionPolicy { current.withLockedValue { $0.connections } }
    /// Message rules plus connection rules in force.
    public var ruleCount: Int { current.withLockedValue { $0.engine.rules.count + $0.connections.rules.count } }

    /// Reads the file again and, if it is valid, puts it in force; returns the rule count.
    /// Throws (keeping the previous policy) when it is not.
    @discardableResult
    public func reload() throws(PolicyError) -> Int {
        guard let path else { return ruleCount }
        let data = try Self.read(path)
        return try install(data)
    }

    /// Like ``reload()``, but only when the file's bytes differ from the last attempt's: nil when
    /// unchanged (a broken file is reported once, not on every poll).
    public func reloadIfChanged() throws(PolicyError) -> Int? {
        guard let path else { return nil }
        let data: Data
        do { data = try Self.read(path) } catch {
            // A missing or unreadable file is reported once, until it can be read again.
            let first = current.withLockedValue { current in
                defer { current.readFailed = true }
                return !current.readFailed
            }
            if first { throw error }
            return nil
        }
        let unchanged = current.withLockedValue { current in
            defer { current.readFailed = false }
            return !current.readFailed && data == current.lastSeen
        }
        guard !unchanged else { return nil }
        return try install(data)
    }

    /// Puts a parsed document in force (tests, programmatic use).
    public func replace(with document: PolicyDocument) {
        apply(document, seen: nil)
    }

    private func install(_ data: Data) throws(PolicyError) -> Int {
        let document: PolicyDocument
        do {
            document = try PolicyDocument(yaml: String(decoding: data, as: UTF8.self))
            try Self.checkScopes(document, state: state)
        } catch {
            current.withLockedValue { $0.lastSeen = data }
            throw error
        }
        apply(document, seen: data)
        return document.rules.count + document.connectionRules.count
    }

    private func apply(_ document: PolicyDocument, seen: Data?) {
        let built = Self.build(document, state: state, dryRun: dryRun, seen: seen)
        current.withLockedValue { $0 = built }
        state.retain(messageRules: Set(document.rules.map(\.name)), connectionRules: Set(document.connectionRules.map(\.name)))
    }

    private static func build(_ document: PolicyDocument, state: PolicyState, dryRun: Bool, seen: Data?) -> Current {
        Current(engine: PolicyEngine(rules: document.rules, state: state, dryRun: dryRun),
                connections: ConnectionPolicy(rules: document.connectionRules, defaultAllows: document.connectionDefaultAllows,
                                              state: state, dryRun: dryRun),
                lastSeen: seen)
    }

    /// A policy with `scope: fleet` needs the fleet's Redis (`--redis`), at start and at reload.
    private static func checkScopes(_ document: PolicyDocument, state: PolicyState) throws(PolicyError) {
        guard let (location, field) = document.firstFleetScope, state.fleet == nil || state.fleetSessions == nil else { return }
        throw .invalid(location, field, "fleet limits are shared through Redis: start the relay with --redis URL, or use scope local")
    }

    private static func read(_ path: String) throws(PolicyError) -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .unreadable(path, (error as NSError).localizedDescription)
        }
    }
}
