import BLIPNIO
import Foundation

/// Where the admin listener (`/metrics`, `/healthz`, `/readyz`, `/sessions`) listens and who may
/// use it. Bound to loopback by default; any other address requires a bearer token.
public struct AdminConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests, benchmarks).
    public var port = 9094
    /// Required as `Authorization: Bearer TOKEN` on every request when set; mandatory off loopback.
    public var bearerToken: String?
    /// Serve https with this certificate and key (`--admin-tls-cert`, `--admin-tls-key`): a fleet's
    /// admin listeners are reached over the network. Without it, a token that comes in the clear
    /// from off the machine is refused (``AdminAccess``).
    public var tls: BLIPServerTLS?
    /// Without background health checks, `/readyz` gives each node this long (seconds) to accept a TCP connection.
    public var upstreamProbeTimeout: Int64 = 1
    /// Largest request head accepted; bodies are ignored.
    public var maxRequestHeadBytes = 8 * 1024

    public init(host: String = "127.0.0.1", port: Int = 9094, bearerToken: String? = nil, tls: BLIPServerTLS? = nil) {
        self.host = host
        self.port = port
        self.bearerToken = bearerToken
        self.tls = tls
    }

    /// True for 127.0.0.0/8, ::1 and `localhost`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether a request's `Authorization` header lets it in: always when no token is set;
    /// otherwise the `Bearer` scheme (its name in any case, RFC 7235 §2.1) and the token, compared
    /// in time independent of where they differ.
    public func authorizes(_ authorization: String?) -> Bool {
        guard let token = bearerToken, !token.isEmpty else { return true }
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let given = Array(parts[1].trimmingCharacters(in: .whitespaces).utf8), expected = Array(token.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }

    /// The token from, in this order, `--admin-token`, the first line of `--admin-token-file`, or
    /// `BLIPSCOPE_ADMIN_TOKEN` (the file and the variable keep it out of the process list); nil
    /// when none is given. A file that cannot be read, or holds no token, is an error.
    public static func token(argument: String?, file: String?, environment: [String: String]) throws(RelayError) -> String? {
        if let argument { return argument }
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw RelayError(.configuration("--admin-token-file \(file): cannot be read"))
            }
            let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !token.isEmpty else { throw RelayError(.configuration("--admin-token-file \(file): holds no token")) }
            return token
        }
        return environment["BLIPSCOPE_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Rejects a non-loopback address without a token.
    public func validate() throws(RelayError) {
        if !isLoopback && (bearerToken ?? "").isEmpty {
            throw RelayError(.adminTokenRequired(host: host))
        }
    }
}
