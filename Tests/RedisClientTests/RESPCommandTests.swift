import NIOCore
import RedisClient
import Testing

/// The command encoder: an array of bulk strings, byte for byte; its description never shows
/// an argument.
@Suite struct RESPCommandTests {
    @Test func encodesAnArrayOfBulkStrings() {
        let command = RESPCommand("SET", "key", "value", "PX", "500")
        let text = "*5\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n$2\r\nPX\r\n$3\r\n500\r\n"
        #expect(command.encoded == ByteBuffer(string: text))
        #expect(command.encodedLength == text.utf8.count)
        #expect(RESPCommand("PING").encoded == ByteBuffer(string: "*1\r\n$4\r\nPING\r\n"))
    }

    @Test func argumentsAreBinarySafeAndTyped() {
        var command = RESPCommand("ZADD", [ByteBuffer(bytes: [0, 0x0D, 0x0A, 0xFF])])
        command.append(-12)
        command.append(double: 1.5)
        command.append(double: .infinity)
        command.append(double: -.infinity)
        command.append("")
        var expected = ByteBuffer(string: "*7\r\n$4\r\nZADD\r\n$4\r\n")
        expected.writeBytes([0, 0x0D, 0x0A, 0xFF])
        expected.writeString("\r\n$3\r\n-12\r\n$3\r\n1.5\r\n$4\r\n+inf\r\n$4\r\n-inf\r\n$0\r\n\r\n")
        #expect(command.encoded == expected)
        #expect(command.encodedLength == expected.readableBytes)
    }

    @Test func theEncoderAndTheParserAgree() throws {
        // A server reads a command as an array of bulk strings: the same shape as a reply.
        let command = RESPCommand("EVALSHA", "0123456789abcdef0123456789abcdef01234567", "1", "fleet:tokens", "10")
        var parser = RESPParser()
        parser.append(command.encoded)
        let value = try parser.next()
        #expect(value == .array(([command.name] + command.arguments.map { String(buffer: $0) }).map { .bulkString($0) }))
    }

    @Test func theDescriptionNamesTheCommandButNoArgument() {
        let auth = RESPCommand("AUTH", "alice", "s3cret-password")
        #expect(auth.description == "AUTH (2 arguments)")
        #expect(!"\(auth)".contains("s3cret"))
        #expect(RESPCommand("GET", "k").description == "GET (1 argument)")
    }
}
