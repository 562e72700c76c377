import NIOCore

/// One reply of the Redis serialization protocol, version 2 (RESP2).
///
/// The client never sends `HELLO 3`, so a server only ever answers in RESP2: simple strings,
/// errors, integers, bulk strings and arrays, the last two possibly null (`$-1`, `*-1`). The
/// RESP3 types (null `_`, double `,`, boolean `#`, map `%`, set `~`, push `>`, …) are refused by
/// ``RESPParser`` as a protocol violation.
public enum RESPValue: Sendable, Hashable {
    /// `+OK\r\n`: a line of text without CR or LF.
    case simpleString(String)
    /// `-ERR message\r\n`: the server's error reply, its kind first (`ERR`, `NOSCRIPT`, `WRONGTYPE`).
    case error(String)
    /// `:42\r\n`: a signed 64-bit integer.
    case integer(Int64)
    /// `$5\r\nhello\r\n`: binary-safe bytes; nil for the null bulk string `$-1\r\n` (a missing key).
    case bulkString(ByteBuffer?)
    /// `*2\r\n…`: the elements in order; nil for the null array `*-1\r\n`.
    case array([RESPValue]?)
}

extension RESPValue {
    /// A bulk string of `text`'s UTF-8 bytes.
    public static func bulkString(_ text: String) -> RESPValue { .bulkString(ByteBuffer(string: text)) }

    /// The null bulk string or the null array.
    public var isNull: Bool {
        switch self {
        case .bulkString(nil), .array(nil): true
        default: false
        }
    }

    /// A simple string's or bulk string's text (UTF-8, invalid bytes replaced); nil otherwise.
    public var string: String? {
        switch self {
        case let .simpleString(text): text
        case let .bulkString(bytes?): String(buffer: bytes)
        default: nil
        }
    }

    /// A bulk string's bytes (a simple string's as UTF-8); nil otherwise.
    public var bytes: ByteBuffer? {
        switch self {
        case let .bulkString(bytes?): bytes
        case let .simpleString(text): ByteBuffer(string: text)
        default: nil
        }
    }

    /// An integer reply, or a string reply holding a decimal integer (TIME's parts, a GET of a
    /// counter); nil otherwise.
    public var integer: Int64? {
        switch self {
        case let .integer(value): value
        case .simpleString, .bulkString: string.flatMap { Int64($0) }
        default: nil
        }
    }

    /// An array's elements; nil for anything else, the null array included.
    public var array: [RESPValue]? {
        if case let .array(elements?) = self { return elements }
        return nil
    }

    /// The reply's type and size for error sentences, never its content (which may be a secret).
    var summary: String {
        switch self {
        case .simpleString: "a simple string"
        case .error: "an error"
        case .integer: "an integer"
        case .bulkString(nil): "a null bulk string"
        case let .bulkString(bytes?): "a bulk string of \(bytes.readableBytes) bytes"
        case .array(nil): "a null array"
        case let .array(elements?): "an array of \(elements.count) elements"
        }
    }
}
