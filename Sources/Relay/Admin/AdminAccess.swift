import NIOCore
import NIOHTTP1

/// Whether an admin request may be answered, before its token is compared: a bearer token that
/// came over plain HTTP from off the machine has crossed the network in the clear, so the request
/// is refused whatever the token (and the token is never compared), and the answer says to use
/// the listener's TLS (`--admin-tls-cert`). Over TLS, or from loopback, tokens are taken as usual.
/// Pure: the listener's TLS, the peer's address and the request head in, a verdict out.
struct AdminAccess {
    enum Verdict: Equatable {
        case proceed
        /// 403, with this sentence.
        case refuseClearToken(String)
    }

    /// The listener serves TLS.
    var tls: Bool

    func verdict(peer: SocketAddress?, head: HTTPRequestHead) -> Verdict {
        guard !tls, !Self.isLoopback(peer), Self.carriesToken(head) else { return .proceed }
        return .refuseClearToken("a token sent in the clear from off this machine is refused: reach the admin listener "
                                 + "over https (the relay's --admin-tls-cert and --admin-tls-key)")
    }

    /// An `Authorization` header, or an `access_token` in the query (the web view's feeds).
    static func carriesToken(_ head: HTTPRequestHead) -> Bool {
        head.headers.contains(name: "authorization") || head.uri.contains("access_token=")
    }

    /// 127.0.0.0/8, ::1 and IPv4-mapped loopback; a Unix socket is local too. No address: not.
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4(let v4)?:
            return v4.address.sin_addr.s_addr.bigEndian >> 24 == 127
        case .v6?:
            guard let ip = address?.ipAddress else { return false }
            return ip == "::1" || ip.hasPrefix("::ffff:127.")
        case .unixDomainSocket?:
            return true
        case nil:
            return false
        }
    }
}
