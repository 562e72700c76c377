import Foundation
import Yams

/// One YAML node of a policy file together with where it is (rule and field path), so every
/// accessor can throw a ``PolicyError`` that names both. Mappings are read with the set of keys
/// they may hold: an unknown key is an error, because a misspelt key would otherwise silently
/// disable part of a rule.
struct PolicyNode {
    let node: Node
    /// `rule "name"`, `rule #2`, `connection rule "name"` or `policy`.
    let location: String
    /// Dotted path inside the rule, "" at its top.
    let path: String

    init(_ node: Node, location: String, path: String = "") {
        self.node = node
        self.location = location
        self.path = path
    }

    func fail(_ problem: String) -> PolicyError { .invalid(location, path, problem) }

    func child(_ key: String, _ node: Node) -> PolicyNode {
        PolicyNode(node, location: location, path: path.isEmpty ? key : path + "." + key)
    }

    func relocated(_ location: String) -> PolicyNode { PolicyNode(node, location: location, path: path) }

    // MARK: mappings

    /// The mapping's entries by key, in file order; throws for a non-mapping, a non-string or
    /// repeated key, or a key not in `allowed`.
    func mapping(allowed: Set<String>) throws(PolicyError) -> PolicyMapping {
        guard case .mapping(let mapping) = node else { throw fail("must be a mapping") }
        var entries: [(String, PolicyNode)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else { throw fail("keys must be plain names") }
            guard allowed.contains(key) else {
                throw child(key, value).fail("unknown key (expected one of: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard !entries.contains(where: { $0.0 == key }) else { throw child(key, value).fail("given twice") }
            entries.append((key, child(key, value)))
        }
        return PolicyMapping(owner: self, entries: entries)
    }

    var isMapping: Bool { if case .mapping = node { true } else { false } }

    // MARK: scalars

    func string() throws(PolicyError) -> String {
        guard case .scalar(let scalar) = node else { throw fail("must be a text value") }
        return scalar.string
    }

    func nonEmptyString() throws(PolicyError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw fail("must not be empty") }
        return text
    }

    /// A string, or a list of strings (`profile: [rev, norev]`).
    func strings() throws(PolicyError) -> [String] {
        if case .sequence(let sequence) = node {
            var result: [String] = []
            for (index, item) in sequence.enumerated() {
                result.append(try child("\(index)", item).nonEmptyString())
            }
            guard !result.isEmpty else { throw fail("must not be an empty list") }
            return result
        }
        return [try nonEmptyString()]
    }

    func bool() throws(PolicyError) -> Bool {
        guard let value = node.bool else { throw fail("must be true or false") }
        return value
    }

    func integer(min: Int = Int.min) throws(PolicyError) -> Int {
        guard let value = node.int else { throw fail("must be a whole number") }
        guard value >= min else { throw fail(min == 1 ? "must be a positive whole number" : "must be at least \(min)") }
        return value
    }

    func positiveNumber() throws(PolicyError) -> Double {
        guard let value = node.float, value.isFinite, value > 0 else { throw fail("must be a positive number") }
        return value
    }

    func probability() throws(PolicyError) -> Double {
        guard let value = node.float, value >= 0, value <= 1 else { throw fail("must be a number from 0 to 1") }
        return value
    }

    /// The largest byte size or duration (in nanoseconds, ~146 years) a policy may give: well
    /// inside `Int` and `UInt64`, so converting it, or adding it to a time, cannot trap.
    static let maxMagnitude = Double(1 << 62)

    /// A byte size: a whole number, or with a unit `KB`/`MB`/`GB` (powers of 1024), e.g. `64KB`.
    func byteSize() throws(PolicyError) -> Int {
        if let value = node.int {
            guard value >= 0 else { throw fail("must not be negative") }
            return value
        }
        let text = try string().trimmingCharacters(in: .whitespaces).uppercased()
        let units: [(String, Int)] = [("KIB", 1 << 10), ("MIB", 1 << 20), ("GIB", 1 << 30), ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("B", 1)]
        for (unit, factor) in units where text.hasSuffix(unit) {
            if let number = Double(text.dropLast(unit.count).trimmingCharacters(in: .whitespaces)), number >= 0 {
                let bytes = number * Double(factor)
                guard bytes < Self.maxMagnitude else { throw fail("is too large") }
                return Int(bytes)
            }
        }
        throw fail("must be a byte count such as 4096 or 64KB")
    }

    /// A duration in nanoseconds: a number of seconds, or a number with `ns`, `us`, `ms`, `s`, `m`.
    func duration() throws(PolicyError) -> UInt64 {
        if let seconds = node.float, case .scalar(let scalar) = node, Double(scalar.string) != nil {
            guard seconds >= 0, seconds.isFinite else { throw fail("must not be negative") }
            guard seconds * 1e9 < Self.maxMagnitude else { throw fail("is too long") }
            return UInt64(seconds * 1e9)
        }
        let text = try string().trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9)]
        for (unit, factor) in units where text.hasSuffix(unit) {
            if let number = Double(text.dropLast(unit.count).trimmingCharacters(in: .whitespaces)), number >= 0, number.isFinite {
                guard number * factor < Self.maxMagnitude else { throw fail("is too long") }
                return UInt64(number * factor)
            }
        }
        throw fail("must be a duration such as 250ms, 2s or 1.5 (seconds)")
    }
}

/// The entries of one validated mapping.
struct PolicyMapping {
    let owner: PolicyNode
    let entries: [(String, PolicyNode)]

    subscript(key: String) -> PolicyNode? { entries.first { $0.0 == key }?.1 }

    var keys: [String] { entries.map(\.0) }

    /// The node for a key that must be present.
    func required(_ key: String) throws(PolicyError) -> PolicyNode {
        guard let node = self[key] else {
            throw PolicyError.invalid(owner.location, owner.path.isEmpty ? key : owner.path + "." + key, "is required")
        }
        return node
    }
}
