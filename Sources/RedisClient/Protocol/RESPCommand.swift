import NIOCore

/// A command as the client sends it: an array of bulk strings, the command's name first.
///
/// Every argument is binary-safe bytes; strings are sent as UTF-8 and integers in decimal.
/// `description` names the command and counts its arguments but never shows them: AUTH's
/// password, a session's token or a key a person should not see never reach a log.
public struct RESPCommand: Sendable, Hashable, CustomStringConvertible {
    /// The command's name (`GET`, `EVALSHA`), upper-cased as given.
    public let name: String
    /// The arguments after the name, in order.
    public private(set) var arguments: [ByteBuffer]

    public init(_ name: String, _ arguments: [ByteBuffer]) {
        self.name = name
        self.arguments = arguments
    }

    /// A command whose arguments are all text (`SET key value PX 500`).
    public init(_ name: String, _ arguments: String...) {
        self.init(name, arguments.map { ByteBuffer(string: $0) })
    }

    public mutating func append(_ argument: ByteBuffer) { arguments.append(argument) }

    public mutating func append(_ argument: String) { arguments.append(ByteBuffer(string: argument)) }

    public mutating func append<Integer: BinaryInteger>(_ argument: Integer) { append(String(argument)) }

    /// A score or other floating-point argument in the form Redis reads (`1.5`, `inf`, `-inf`).
    public mutating func append(double argument: Double) {
        if argument == .infinity {
            append("+inf")
        } else if argument == -.infinity {
            append("-inf")
        } else {
            append(String(argument))
        }
    }

    /// The command's bytes on the wire: `*N\r\n` then `$len\r\nbytes\r\n` for the name and
    /// each argument.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: encodedLength)
        Self.writeHeader(UInt8(ascii: "*"), arguments.count + 1, into: &buffer)
        Self.writeHeader(UInt8(ascii: "$"), name.utf8.count, into: &buffer)
        buffer.writeString(name)
        buffer.writeStaticString("\r\n")
        for argument in arguments {
            Self.writeHeader(UInt8(ascii: "$"), argument.readableBytes, into: &buffer)
            buffer.writeImmutableBuffer(argument)
            buffer.writeStaticString("\r\n")
        }
    }

    /// The command encoded in a buffer of its own.
    public var encoded: ByteBuffer {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return buffer
    }

    /// The number of bytes ``encode(into:)`` writes.
    public var encodedLength: Int {
        func header(_ count: Int) -> Int { 3 + String(count).utf8.count }
        let nameLength = name.utf8.count
        return arguments.reduce(header(arguments.count + 1) + header(nameLength) + nameLength + 2) {
            $0 + header($1.readableBytes) + $1.readableBytes + 2
        }
    }

    public var description: String {
        arguments.count == 1 ? "\(name) (1 argument)" : "\(name) (\(arguments.count) arguments)"
    }

    private static func writeHeader(_ type: UInt8, _ count: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(type)
        buffer.writeString(String(count))
        buffer.writeStaticString("\r\n")
    }
}
