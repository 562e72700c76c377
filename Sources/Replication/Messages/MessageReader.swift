import BLIPCore
import NIOCore

/// Reads one message's properties and body for a typed view, collecting every protocol
/// violation it meets instead of stopping at the first.
struct MessageReader {
    let profile: String
    let properties: Properties
    let body: ByteBuffer
    let context: MessageContext
    var violations: [ReplicationError] = []

    /// Cap on violations kept per message: a 10,000-entry changes body with bad rev IDs needs
    /// only a few examples.
    static let maxViolations = 8

    init(profile: String, message: BLIPMessage, context: MessageContext) {
        self.profile = profile
        self.properties = message.properties
        self.body = message.body
        self.context = context
    }

    mutating func report(_ violation: ReplicationError) {
        if violations.count < Self.maxViolations { violations.append(violation) }
    }

    func string(_ name: String) -> String? { properties[name] }

    mutating func required(_ name: String) -> String? {
        guard let value = properties[name] else {
            report(.missingProperty(profile, name))
            return nil
        }
        return value
    }

    /// A boolean property: `true`/`false` (also `1`/`0`, which some peers send).
    mutating func bool(_ name: String) -> Bool {
        guard let value = properties[name] else { return false }
        switch value {
        case "true", "1": return true
        case "false", "0", "": return false
        default:
            report(.invalidProperty(profile, name, value, expected: "true or false"))
            return false
        }
    }

    mutating func int(_ name: String) -> Int? {
        guard let value = properties[name] else { return nil }
        guard let number = Int(value), number >= 0 else {
            report(.invalidProperty(profile, name, value, expected: "a non-negative integer"))
            return nil
        }
        return number
    }

    /// A property holding JSON (`sequence`, `since`).
    mutating func json(property name: String) -> JSONValue? {
        guard let value = properties[name] else { return nil }
        do {
            return try JSONParser.parse(value)
        } catch {
            report(.invalidProperty(profile, name, value, expected: "JSON-encoded (\(error.detail))"))
            return nil
        }
    }

    /// The `collection` index, checked against getCollections' list when one is known.
    mutating func collection() -> Int? {
        guard let value = properties["collection"] else { return nil }
        guard let index = Int(value), index >= 0 else {
            report(.invalidProperty(profile, "collection", value, expected: "a collection index"))
            return nil
        }
        if !context.collections.isEmpty, index >= context.collections.count {
            report(.collectionOutOfRange(index, known: context.collections.count))
        }
        return index
    }

    /// The body as JSON; nil (with a violation) when empty and `required`, too large, or invalid.
    mutating func jsonBody(required: Bool = true) -> JSONValue? {
        let size = body.readableBytes
        if size == 0 {
            if required { report(.wrongShape("\(profile) body", expected: "JSON, not empty")) }
            return nil
        }
        guard size <= context.maxJSONBodyBytes else {
            report(.bodyTooLarge("\(profile) body", size: size, limit: context.maxJSONBodyBytes))
            return nil
        }
        do {
            return try JSONParser.parse(body)
        } catch {
            report(.invalidJSON("\(profile) body", error.detail))
            return nil
        }
    }

    /// Checks a revision ID's syntax against the session's versioning (§4).
    mutating func checkRevID(_ text: String) -> RevID? {
        switch RevID.parse(text, versioning: context.versioning) {
        case .success(let id): return id
        case .failure(let error): report(error); return nil
        }
    }
}
