import BLIPCore
import NIOCore

/// Reads one message's properties and body for a typed view, collecting every protocol
/// violation it meets instead of stopping at the first.
///
/// The properties the typed views know (``PropertyName``) are read in one pass when the reader
/// is made; lookups then search that short list instead of scanning the properties again.
struct MessageReader {
    /// The profile named in violations.
    var profile: String
    let properties: Properties
    let body: ByteBuffer
    let context: MessageContext
    var violations: [ReplicationError] = []
    /// The known properties present, first occurrence of each.
    private var known = KnownProperties()

    /// Cap on violations kept per message: a 10,000-entry changes body with bad rev IDs needs
    /// only a few examples.
    static let maxViolations = 8

    init(profile: String = "message", message: BLIPMessage, context: MessageContext) {
        self.profile = profile
        self.properties = message.properties
        self.body = message.body
        self.context = context
        // Filled in place: building a local and assigning it would copy the inline storage.
        message.properties.forEachRawPair { key, value in
            guard let name = PropertyName.matching(key) else { return true }
            self.known.add(name, value: Self.text(of: value, for: name))
            return true
        }
    }

    /// The message's first `Profile` property and the known profile it names, found without
    /// reading the other properties; a known profile's name is shared, not decoded.
    static func profile(of message: BLIPMessage) -> (name: String?, known: ReplicationProfile?) {
        var found: (name: String?, known: ReplicationProfile?) = (nil, nil)
        message.properties.forEachRawPair { key, value in
            guard key.matches(.profile) else { return true }
            let known = ReplicationProfile(utf8: value)
            found = (known?.rawValue ?? String(decoding: value, as: UTF8.self), known)
            return false
        }
        return found
    }

    /// True when the body is non-empty and within the analysis limit, so a fast path may read
    /// it; otherwise ``jsonBody(required:)`` decides what to report.
    var bodyIsScannable: Bool { body.readableBytes > 0 && body.readableBytes <= context.maxJSONBodyBytes }

    mutating func report(_ violation: ReplicationError) {
        if violations.count < Self.maxViolations { violations.append(violation) }
    }

    func string(_ name: PropertyName) -> String? { known.value(of: name) }

    /// A property value as a String; a known profile's name is shared, not decoded.
    private static func text(of value: UnsafeRawBufferPointer, for name: PropertyName) -> String {
        if name == .profile, let known = ReplicationProfile(utf8: value) { return known.rawValue }
        return String(decoding: value, as: UTF8.self)
    }

    mutating func required(_ name: PropertyName) -> String? {
        guard let value = string(name) else {
            report(.missingProperty(profile, name))
            return nil
        }
        return value
    }

    /// A boolean property: `true`/`false` (also `1`/`0`, which some peers send).
    mutating func bool(_ name: PropertyName) -> Bool {
        guard let value = string(name) else { return false }
        switch value {
        case "true", "1": return true
        case "false", "0", "": return false
        default:
            report(.invalidProperty(profile, name, value, expected: "true or false"))
            return false
        }
    }

    mutating func int(_ name: PropertyName) -> Int? {
        guard let value = string(name) else { return nil }
        guard let number = Int(value), number >= 0 else {
            report(.invalidProperty(profile, name, value, expected: "a non-negative integer"))
            return nil
        }
        return number
    }

    /// A property holding JSON (`sequence`, `since`).
    mutating func json(property name: PropertyName) -> JSONValue? {
        guard let value = string(name) else { return nil }
        // Sequences are mostly plain integers: no parser needed for those.
        if Self.isPlainInteger(value) { return .number(value) }
        do {
            return try JSONParser.parse(value)
        } catch {
            report(.invalidProperty(profile, name, value, expected: "JSON-encoded (\(error.detail))"))
            return nil
        }
    }

    /// The `collection` index, checked against getCollections' list when one is known.
    mutating func collection() -> Int? {
        guard let value = string(.collection) else { return nil }
        guard let index = Int(value), index >= 0 else {
            report(.invalidProperty(profile, .collection, value, expected: "a collection index"))
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

    /// True for text that is a JSON integer as is: an optional minus, then `0` or digits not
    /// starting with `0`.
    static func isPlainInteger(_ text: String) -> Bool {
        var digits = text.utf8[...]
        if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        guard let first = digits.first, JSONScanner.isDigit(first) else { return false }
        if first == UInt8(ascii: "0") { return digits.count == 1 }
        return digits.allSatisfy(JSONScanner.isDigit)
    }
}
