/// The one error type of the `ProxyProtocol` module: why a connection's first bytes are no
/// acceptable PROXY header. Each ends the connection (`doc/proxy-protocol.txt` §2.1: any
/// sequence which does not exactly match the protocol must be discarded and the connection
/// aborted). `description` is a sentence for a person; match on ``kind`` in code.
public struct ProxyProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, without the details: stable, and a bounded metric label (``label``).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The bytes start neither version 1's `PROXY ` nor version 2's signature: the peer is
        /// no proxy speaking the protocol (a client that connected directly, a scanner).
        case notProxyHeader = "not_proxy"
        /// The bytes start like a header but break its grammar.
        case malformed
        /// A well-formed version 2 header for a connection the relay cannot take: a UDP or
        /// UNIX-socket one (§2.2 lets a receiver refuse the families it does not implement).
        case unsupported
        /// No version 1 CRLF within 107 bytes, or a version 2 header longer than the limit.
        case tooLong = "too_long"
    }

    private enum Base: Sendable, Hashable {
        case notProxyHeader(firstBytes: [UInt8])
        case malformed(String)
        case unsupported(String)
        case lineTooLong(limit: Int)
        case headerTooLong(length: Int, limit: Int)
    }

    private let base: Base

    private init(_ base: Base) { self.base = base }

    static func notProxyHeader(_ bytes: some Collection<UInt8>) -> Self { Self(.notProxyHeader(firstBytes: Array(bytes.prefix(16)))) }
    static func malformed(_ reason: String) -> Self { Self(.malformed(reason)) }
    static func unsupported(_ reason: String) -> Self { Self(.unsupported(reason)) }
    static func lineTooLong() -> Self { Self(.lineTooLong(limit: ProxyProtocolLimits.version1MaximumLineBytes)) }
    static func headerTooLong(_ length: Int, limit: Int) -> Self { Self(.headerTooLong(length: length, limit: limit)) }

    public var kind: Kind {
        switch base {
        case .notProxyHeader: .notProxyHeader
        case .malformed: .malformed
        case .unsupported: .unsupported
        case .lineTooLong, .headerTooLong: .tooLong
        }
    }

    public var description: String {
        switch base {
        case .notProxyHeader(let bytes):
            "no PROXY protocol header: the connection starts with \(Self.shown(bytes))"
        case .malformed(let reason):
            "malformed PROXY protocol header: \(reason)"
        case .unsupported(let reason):
            "unsupported PROXY protocol header: \(reason)"
        case .lineTooLong(let limit):
            "PROXY protocol version 1 line without CRLF in its first \(limit) bytes"
        case .headerTooLong(let length, let limit):
            "PROXY protocol version 2 header of \(length) bytes, over the limit of \(limit)"
        }
    }

    /// Text in quotes (CR, LF and other bytes escaped) when it starts printable, else hex: a log
    /// line never carries raw bytes.
    private static func shown(_ bytes: [UInt8]) -> String {
        guard let first = bytes.first, (0x20...0x7E).contains(first) else {
            return "0x" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        let text = bytes.map { byte -> String in
            switch byte {
            case 0x0D: return "\\r"
            case 0x0A: return "\\n"
            case 0x22, 0x5C: return "\\" + String(UnicodeScalar(byte))
            case 0x20...0x7E: return String(UnicodeScalar(byte))
            default: return "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return "\"" + text.joined() + "\""
    }
}
