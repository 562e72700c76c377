/// Removes secrets from handshake headers and request targets before they are stored or shown,
/// keeping what helps debugging: the auth scheme, cookie names and attributes, parameter names.
///
/// - `Authorization`, `Proxy-Authorization`: the scheme stays (`Basic <redacted>`).
/// - `Cookie`: every value (`SyncGatewaySession=<redacted>; other=<redacted>`).
/// - `Set-Cookie`: the value of the cookie; attributes such as `Path` and `Expires` stay.
/// - Any header whose name contains `token`, `secret`, `password`, `api-key`, `apikey` or
///   `session`: the whole value.
/// - Query parameters of a target whose names contain one of those words, or `auth`: their values.
///
/// It does not touch bodies or BLIP properties.
public enum HeaderRedaction {
    public static let placeholder = "<redacted>"

    private static let secretWords = ["token", "secret", "password", "api-key", "apikey", "session"]

    /// `fields` with every secret value replaced by ``placeholder``.
    public static func redact(_ fields: HTTPHeaderFields) -> HTTPHeaderFields {
        HTTPHeaderFields(fields.map { .init(name: $0.name, value: redactedValue(name: $0.name, value: $0.value)) })
    }

    /// The value to keep for header `name`.
    public static func redactedValue(name: String, value: String) -> String {
        switch name.lowercased() {
        case "authorization", "proxy-authorization":
            guard let space = value.firstIndex(of: " ") else { return placeholder }
            return "\(value[..<space]) \(placeholder)"
        case "cookie":
            return value.split(separator: ";").map { cookie in
                "\(cookieName(cookie))=\(placeholder)"
            }.joined(separator: "; ")
        case "set-cookie":
            var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard !parts.isEmpty else { return value }
            parts[0] = "\(cookieName(parts[0][...]))=\(placeholder)"
            return parts.joined(separator: ";")
        case let lower where secretWords.contains(where: lower.contains):
            return placeholder
        default:
            return value
        }
    }

    /// `target` (a path with an optional query) with secret query values replaced, e.g.
    /// `/db/_blipsync?token=abc` → `/db/_blipsync?token=<redacted>`.
    public static func redactTarget(_ target: String) -> String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        let query = target[target.index(after: mark)...]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
            let name = parameter[..<equals].lowercased()
            let isSecret = (secretWords + ["auth"]).contains { name.contains($0) }
            return isSecret ? "\(parameter[..<equals])=\(placeholder)" : String(parameter)
        }
        return "\(target[..<mark])?\(redacted.joined(separator: "&"))"
    }

    /// A request line (`GET /db/_blipsync?token=… HTTP/1.1`) with its target redacted.
    public static func redactRequestLine(_ line: String) -> String {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return line }
        return "\(parts[0]) \(redactTarget(String(parts[1]))) \(parts[2])"
    }

    private static func cookieName(_ cookie: Substring) -> String {
        let name = cookie.prefix { $0 != "=" }
        return String(name.trimmingSpaces)
    }
}
