/// Where a Redis server is and how to log in: host, port, database, credentials, TLS.
///
/// Read from a URL, `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://…` for TLS
/// (the IANA provisional `redis` and `rediss` schemes): the port defaults to 6379, the
/// database to 0; user and password are percent-decoded; an IPv6 host is written in brackets
/// (`redis://[::1]:6379`). Options after `?` are not read and make the URL an error.
///
/// The credentials never appear in ``description``, in `debugDescription`, in a mirror, or in
/// the sentence of an error about the URL: they show as `***`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A DNS name or an IP address (without brackets).
    public var host: String
    public var port: Int
    /// The database SELECTed on connect (0 needs no SELECT).
    public var database: Int
    /// The ACL user for `AUTH user password` (Redis 6); nil sends `AUTH password`.
    public var user: String?
    /// The password; nil sends no AUTH.
    public var password: String?
    /// Whether the connection is made with TLS (`rediss://`).
    public var usesTLS: Bool

    public static let defaultPort = 6379

    public init(host: String, port: Int = RedisEndpoint.defaultPort, database: Int = 0, user: String? = nil,
                password: String? = nil, usesTLS: Bool = false) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
        self.usesTLS = usesTLS
    }

    /// `redis://127.0.0.1:6379/0`, with `***@` for credentials.
    public var description: String {
        let scheme = usesTLS ? "rediss" : "redis"
        let credentials = user != nil || password != nil ? "***@" : ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(credentials)\(shownHost):\(port)/\(database)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "database": database, "usesTLS": usesTLS,
                                "credentials": user != nil || password != nil ? "***" : "none"])
    }
}

extension RedisEndpoint {
    /// Reads a `redis://` or `rediss://` URL; throws ``RedisError/Code/invalidURL`` with a
    /// sentence that says what is wrong (the URL quoted with its credentials redacted).
    public init(url: String) throws(RedisError) {
        let redacted = Self.redact(url)
        func invalid(_ reason: String) -> RedisError { .invalidURL(redacted, reason) }
        guard let schemeEnd = Self.schemeSeparator(in: url) else { throw invalid("has no scheme (write redis://HOST:PORT or rediss://HOST:PORT)") }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            throw invalid("has the scheme \(scheme)://, not redis:// or rediss://")
        }
        var rest = url[schemeEnd.upperBound...]
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            (user, password) = try Self.credentials(rest[..<at], invalid: invalid)
            rest = rest[rest.index(after: at)...]
        }
        if rest.contains("?") || rest.contains("#") { throw invalid("has options after ? or #, which this client does not read") }
        let path = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
        let authority = rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)]
        let (host, port) = try Self.hostAndPort(authority, invalid: invalid)
        let database = try Self.database(path.dropFirst(), invalid: invalid)
        self.init(host: host, port: port, database: database, user: user, password: password, usesTLS: scheme == "rediss")
    }

    private static func credentials(_ userInfo: Substring, invalid: (String) -> RedisError) throws(RedisError) -> (String?, String) {
        guard let colon = userInfo.firstIndex(of: ":") else {
            throw invalid("has credentials without a colon (write redis://:PASSWORD@HOST or redis://USER:PASSWORD@HOST)")
        }
        guard let user = percentDecoded(userInfo[..<colon]),
              let password = percentDecoded(userInfo[userInfo.index(after: colon)...]) else {
            throw invalid("has credentials with a malformed percent escape (write %XX, two hex digits)")
        }
        guard !password.isEmpty else { throw invalid("has an empty password") }
        return (user.isEmpty ? nil : user, password)
    }

    private static func hostAndPort(_ authority: Substring, invalid: (String) -> RedisError) throws(RedisError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("has an IPv6 host without its closing ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has text after its IPv6 host that is not :PORT") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("has no host") }
        guard let portText else { return (String(host), defaultPort) }
        guard portText.allSatisfy(\.isASCIIDigit), let port = Int(portText), (1...65_535).contains(port) else {
            throw invalid("has the port \"\(portText)\", which is not a number from 1 to 65535")
        }
        return (String(host), port)
    }

    private static func database(_ text: Substring, invalid: (String) -> RedisError) throws(RedisError) -> Int {
        guard !text.isEmpty else { return 0 }
        guard text.allSatisfy(\.isASCIIDigit), let database = Int(text), database <= Int(Int32.max) else {
            throw invalid("has the path /\(text), which is not a database number (write /0, /1, …)")
        }
        return database
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The URL with everything between `://` (or its start) and the last `@` replaced by
    /// `***`, for sentences.
    static func redact(_ url: String) -> String {
        let start = schemeSeparator(in: url)?.upperBound ?? url.startIndex
        guard let at = url[start...].lastIndex(of: "@") else { return url }
        return String(url[..<start]) + "***" + String(url[at...])
    }
}

extension RedisEndpoint {
    /// Where the first `://` is.
    fileprivate static func schemeSeparator(in url: String) -> Range<String.Index>? {
        var index = url.startIndex
        while index < url.endIndex {
            if url[index...].hasPrefix("://") { return index..<url.index(index, offsetBy: 3) }
            index = url.index(after: index)
        }
        return nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
