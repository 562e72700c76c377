import NIOCore
import RedisClient
import Testing

/// The RESP2 reply parser without sockets: every type, however the bytes are cut into reads,
/// each limit crossed and each malformation refused with its own error, which sticks.
@Suite struct RESPParserTests {
    /// Every reply `reads` holds, in order, fed one read at a time; the parser is returned too.
    static func parse(_ reads: [[UInt8]], limits: RedisLimits = .default) throws(RedisError) -> (values: [RESPValue], parser: RESPParser) {
        var parser = RESPParser(limits: limits)
        var values: [RESPValue] = []
        for read in reads {
            parser.append(ByteBuffer(bytes: read))
            while let value = try parser.next() { values.append(value) }
        }
        return (values, parser)
    }

    static func parse(_ text: String, limits: RedisLimits = .default) throws(RedisError) -> [RESPValue] {
        try parse([Array(text.utf8)], limits: limits).values
    }

    static func error(_ text: String, limits: RedisLimits = .default) -> RedisError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// One reply of every kind, nested arrays, binary bytes and a null inside an array included.
    static let stream = "+OK\r\n-ERR unknown command 'FOO'\r\n:0\r\n:-9223372036854775808\r\n:9223372036854775807\r\n"
        + "$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n-WRONGTYPE x\r\n+\r\n"
    static let expected: [RESPValue] = [
        .simpleString("OK"), .error("ERR unknown command 'FOO'"), .integer(0), .integer(.min), .integer(.max),
        .bulkString("he\r\no"), .bulkString(""), .bulkString(nil), .array(nil), .array([]),
        .array([.integer(1), .array([.bulkString("a"), .bulkString(nil)]), .error("WRONGTYPE x")]),
        .simpleString(""),
    ]

    @Test func readsEveryRESP2Type() throws {
        let (values, parser) = try Self.parse([Array(Self.stream.utf8)])
        #expect(values == Self.expected)
        #expect(parser.bufferedBytes == 0)
        #expect(!parser.isInsideReply)
    }

    @Test func bulkStringsAreBinarySafe() throws {
        let body: [UInt8] = [0, 0xFF, 0x0D, 0x0A, 0x80, 0x0A]
        let values = try Self.parse([Array("$6\r\n".utf8) + body + [0x0D, 0x0A]]).values
        #expect(values == [.bulkString(ByteBuffer(bytes: body))])
    }

    @Test func theSameRepliesWhereverTheBytesAreSplit() throws {
        let bytes = Array(Self.stream.utf8)
        for cut in 0...bytes.count {
            let values = try Self.parse([Array(bytes[..<cut]), Array(bytes[cut...])]).values
            #expect(values == Self.expected, "split at \(cut)")
        }
        for first in stride(from: 0, through: bytes.count, by: 7) {
            for second in stride(from: first, through: bytes.count, by: 5) {
                let reads = [Array(bytes[..<first]), Array(bytes[first..<second]), Array(bytes[second...])]
                #expect(try Self.parse(reads).values == Self.expected, "split at \(first) and \(second)")
            }
        }
        #expect(try Self.parse(bytes.map { [$0] }).values == Self.expected, "one byte per read")
    }

    @Test func anIncompleteReplyIsHeldNotReturned() throws {
        let (values, parser) = try Self.parse([Array("*2\r\n:1\r\n$3\r\nab".utf8)])
        #expect(values.isEmpty)
        #expect(parser.isInsideReply)
        #expect(parser.bufferedBytes == 2, "only the incomplete element's bytes stay buffered")
    }

    @Test func refusesRESP3AndUnknownTypeBytes() {
        for reply in ["_\r\n", ",1.5\r\n", "#t\r\n", "%1\r\n+a\r\n+b\r\n", "~0\r\n", ">1\r\n+x\r\n", "(12\r\n", "=3\r\ntxt\r\n", "!3\r\nERR\r\n", "|0\r\n"] {
            let error = Self.error(reply)
            #expect(error?.code == .protocolViolation, "\(reply.debugDescription)")
            #expect(error?.description.contains("RESP3") == true)
        }
        #expect(Self.error("GET\r\n")?.description.contains("0x47") == true)
        #expect(Self.error("\r\n")?.code == .protocolViolation)
    }

    @Test func refusesMalformedLinesAndLengths() {
        let malformed: [String: String] = [
            ":abc\r\n": "not a 64-bit decimal integer", ":\r\n": "not a 64-bit decimal integer",
            ":-\r\n": "not a 64-bit decimal integer", ":+1\r\n": "not a 64-bit decimal integer",
            ":9223372036854775808\r\n": "not a 64-bit decimal integer", ":1 \r\n": "not a 64-bit decimal integer",
            "$x\r\n": "bulk string's length", "$-2\r\n": "length -2", "*-5\r\n": "length -5", "*1.5\r\n": "array's length",
            "+OK\n": "LF alone", "\n": "0x0A", "+O\rK\r\n": "CR inside a line",
            "$3\r\nabcd\r\n": "CR LF", "$3\r\nabc\n\r": "CR LF",
        ]
        for (reply, words) in malformed {
            let error = Self.error(reply)
            #expect(error?.code == .protocolViolation, "\(reply.debugDescription)")
            #expect(error?.description.contains(words) == true, "\(reply.debugDescription): \(error?.description ?? "no error")")
        }
    }

    @Test func eachLimitCrossedIsAnError() {
        let limits = RedisLimits(maxBulkLength: 8, maxArrayElements: 3, maxNestingDepth: 2, maxLineLength: 10, maxReplyBytes: 40)
        #expect(throws: Never.self) { try Self.parse("$8\r\n12345678\r\n*3\r\n*2\r\n:1\r\n:2\r\n:3\r\n:4\r\n+0123456789\r\n", limits: limits) }
        let crossed: [(String, String)] = [
            ("$9\r\n", "maxBulkLength"), ("*4\r\n", "maxArrayElements"), ("*1\r\n*1\r\n*1\r\n:1\r\n", "maxNestingDepth"),
            ("+01234567890\r\n", "maxLineLength"), ("*3\r\n$8\r\n12345678\r\n$8\r\n12345678\r\n$8\r\n12345678\r\n", "maxReplyBytes"),
            ("*3\r\n:1111111111\r\n:1111111111\r\n:1111111111\r\n", "maxReplyBytes"),
        ]
        for (reply, limit) in crossed {
            let error = Self.error(reply, limits: limits)
            #expect(error?.code == .limitExceeded, "\(reply.debugDescription)")
            #expect(error?.description.contains("RedisLimits.\(limit)") == true, "\(error?.description ?? "no error")")
        }
    }

    @Test func aLineWithoutEndIsRefusedOnceLongerThanTheLimit() throws {
        let limits = RedisLimits(maxLineLength: 10)
        var parser = RESPParser(limits: limits)
        parser.append(ByteBuffer(string: "-0123456789\r"))
        #expect(try parser.next() == nil, "ten bytes and a CR may still be a line of ten")
        parser.append(ByteBuffer(string: "x"))
        #expect(throws: RedisError.self) { try parser.next() }
        #expect(parser.bufferedBytes == 0, "a failed parser drops what it held")
    }

    @Test func aHugeAnnouncedBulkStringIsRefusedBeforeItsBytesCome() {
        var parser = RESPParser()
        parser.append(ByteBuffer(string: "$2147483647\r\n"))
        #expect(throws: RedisError.self) { try parser.next() }
        var array = RESPParser()
        array.append(ByteBuffer(string: "*99999999999\r\n"))
        #expect(throws: RedisError.self) { try array.next() }
    }

    @Test func anErrorSticksAndLaterBytesAreDropped() throws {
        var parser = RESPParser()
        parser.append(ByteBuffer(string: "+OK\r\n?bad\r\n+OK\r\n"))
        #expect(try parser.next() == .simpleString("OK"))
        #expect(throws: RedisError.self) { try parser.next() }
        let first = parser.failure
        parser.append(ByteBuffer(string: "+OK\r\n"))
        #expect(parser.bufferedBytes == 0)
        do {
            _ = try parser.next()
            Issue.record("a failed parser returned a value")
        } catch {
            #expect(error == first)
        }
    }

    @Test func valueAccessors() {
        #expect(RESPValue.bulkString("42").integer == 42)
        #expect(RESPValue.simpleString("PONG").string == "PONG")
        #expect(RESPValue.integer(7).string == nil)
        #expect(RESPValue.array(nil).isNull && RESPValue.bulkString(nil).isNull && !RESPValue.array([]).isNull)
        #expect(RESPValue.array([.integer(1)]).array == [.integer(1)])
    }
}
