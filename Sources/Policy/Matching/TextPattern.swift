import Foundation

/// A compiled text matcher from a policy file: a glob (`*` any run of characters, `?` one
/// character, everything else literal, case-sensitive), or, with the `re:` prefix, a regular
/// expression (ICU syntax, unanchored: use `^…$` to match the whole value).
///
/// Globs are classified once so the common shapes cost one comparison and no allocation:
/// `*` (anything), `exact`, `prefix*`, `*suffix`, `*infix*`; other globs run a backtracking
/// matcher over the UTF-8 bytes. Regexes allocate while matching; they are reached only after a
/// rule's cheaper keys matched.
public struct TextPattern: Sendable, CustomStringConvertible {
    enum Shape: Sendable {
        case any
        case exact(String)
        case prefix(String)
        case suffix(String)
        case infix(String)
        case glob([UInt8])
        case regex(NSRegularExpressionBox)
    }

    let shape: Shape
    /// The pattern as written in the file.
    public let source: String

    /// The longest regular expression a policy may hold, in UTF-16 code units.
    ///
    /// Foundation's `NSRegularExpression` on Linux copies a longer pattern into a heap buffer it
    /// never frees (found by the policy fuzz target: ~2 bytes per character, at every load and
    /// reload), so a longer one is refused instead of leaking at each reload.
    public static let maxRegexLength = 256

    /// Compiles `source`; throws the reason (a bad regex) as text for the caller to place.
    public init(_ source: String) throws(PatternError) {
        self.source = source
        if source.hasPrefix("re:") {
            let expression = String(source.dropFirst(3))
            guard expression.utf16.count <= Self.maxRegexLength else {
                throw PatternError(
                    reason: "regular expression longer than \(Self.maxRegexLength) characters (\(expression.utf16.count))")
            }
            do {
                shape = .regex(NSRegularExpressionBox(try NSRegularExpression(pattern: expression)))
            } catch {
                throw PatternError(reason: "not a valid regular expression: \(expression)")
            }
            return
        }
        shape = Self.classify(source)
    }

    public struct PatternError: Error {
        public let reason: String
    }

    private static func classify(_ glob: String) -> Shape {
        if glob == "*" { return .any }
        let wild = glob.filter { $0 == "*" || $0 == "?" }
        if wild.isEmpty { return .exact(glob) }
        if !glob.contains("?") && wild.count <= 2 {
            let inner = glob.trimmingCharacters(in: CharacterSet(charactersIn: "*"))
            let starts = glob.hasPrefix("*"), ends = glob.hasSuffix("*")
            if !inner.contains("*") {
                if !starts && ends && wild.count == 1 { return .prefix(inner) }
                if starts && !ends && wild.count == 1 { return .suffix(inner) }
                if starts && ends && wild.count == 2 { return .infix(inner) }
            }
        }
        return .glob(Array(glob.utf8))
    }

    /// True when `text` matches.
    public func matches<S: StringProtocol>(_ text: S) -> Bool {
        switch shape {
        case .any: return true
        case .exact(let value): return text == value
        case .prefix(let value): return text.hasPrefix(value)
        case .suffix(let value): return text.hasSuffix(value)
        case .infix(let value): return text.contains(value)
        case .glob(let pattern):
            var copy = String(text)
            return copy.withUTF8 { Self.globMatch(pattern, $0) }
        case .regex(let box):
            let string = String(text)
            return box.regex.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) != nil
        }
    }

    /// Wildcard match with single-star backtracking: linear in practice, never exponential.
    static func globMatch(_ pattern: [UInt8], _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == UInt8(ascii: "?") {
                p += 1
                t = nextScalar(text, t)
            } else if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                starP = p
                starT = t
                p += 1
            } else if p < pattern.count, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if starP >= 0 {
                p = starP + 1
                starT = nextScalar(text, starT)
                t = starT
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }

    /// Index after the UTF-8 scalar starting at `index`.
    private static func nextScalar(_ text: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        var next = index + 1
        while next < text.count, text[next] & 0xC0 == 0x80 { next += 1 }
        return next
    }

    public var description: String { source }
}

/// `NSRegularExpression` is immutable after creation and documented thread-safe for matching.
final class NSRegularExpressionBox: @unchecked Sendable {
    let regex: NSRegularExpression
    init(_ regex: NSRegularExpression) { self.regex = regex }
}
