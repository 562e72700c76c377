import NIOCore

/// An incremental reader of RESP2 replies: fed the bytes of a connection as they are read, it
/// returns each reply once it is complete, whatever way the bytes were cut.
///
/// A pure state machine with no I/O: ``append(_:)`` the bytes of a read, then call ``next()``
/// until it returns nil (it needs more bytes). It holds only the reply being read: the bytes
/// of its incomplete last element and the elements read so far, both bounded by
/// ``RedisLimits``. A reply that crosses a limit, or bytes that are not RESP2, throw a
/// ``RedisError`` (``RedisError/Code/limitExceeded`` or ``RedisError/Code/protocolViolation``);
/// the parser then stays failed, drops what it held, and throws the same error again, since a
/// byte stream cannot be resynchronised and its connection must end.
///
/// An error reply (`-ERR …`) is a value here, ``RESPValue/error(_:)``: inside an array it is an
/// element like any other.
public struct RESPParser: Sendable {
    public let limits: RedisLimits
    /// Bytes received and not parsed yet.
    private var buffer = ByteBuffer()
    private var state = State.typeByte
    /// The arrays the current element is inside, outermost first.
    private var open: [OpenArray] = []
    /// Bytes of the current reply consumed so far (its framing included).
    private var replyBytes = 0
    /// How far into the buffer the current line was already searched for its LF.
    private var searchedLineBytes = 0

    private enum State: Sendable {
        case typeByte
        case line(LineKind)
        case bulkBody(length: Int)
        case failed(RedisError)
    }

    private enum LineKind: Sendable {
        case simpleString, error, integer, bulkLength, arrayLength
    }

    private struct OpenArray: Sendable {
        var remaining: Int
        var elements: [RESPValue]
    }

    public init(limits: RedisLimits = .default) {
        self.limits = limits
    }

    /// Bytes held that are not part of a returned reply yet. Once ``next()`` has returned nil
    /// this is at most ``RedisLimits/maxLineLength`` + 1 or ``RedisLimits/maxBulkLength`` + 1
    /// (the incomplete element), and 0 after an error.
    public var bufferedBytes: Int { buffer.readableBytes }

    /// Whether a reply has been started and not finished.
    public var isInsideReply: Bool {
        switch state {
        case .typeByte: !open.isEmpty
        case .line, .bulkBody: true
        case .failed: false
        }
    }

    /// The error the parser failed with, if it did.
    public var failure: RedisError? {
        if case let .failed(error) = state { return error }
        return nil
    }

    /// Adds the bytes of a read. Ignored once the parser has failed.
    public mutating func append(_ bytes: ByteBuffer) {
        if case .failed = state { return }
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            buffer.discardReadBytes()
            buffer.writeImmutableBuffer(bytes)
        }
    }

    /// The next complete reply, or nil when more bytes are needed.
    public mutating func next() throws(RedisError) -> RESPValue? {
        while true {
            let step: Step
            switch state {
            case let .failed(error): throw error
            case .typeByte: step = readTypeByte()
            case let .line(kind): step = readLine(kind)
            case let .bulkBody(length): step = readBulkBody(length)
            }
            switch step {
            case .needMore: return nil
            case .proceed: continue
            case let .element(value):
                if let reply = close(value) { return reply }
            case let .fail(error):
                state = .failed(error)
                buffer = ByteBuffer()
                open = []
                throw error
            }
        }
    }

    private enum Step {
        case needMore, proceed, element(RESPValue), fail(RedisError)
    }

    private mutating func readTypeByte() -> Step {
        guard let byte = buffer.readInteger(as: UInt8.self) else { return .needMore }
        replyBytes += 1
        switch byte {
        case UInt8(ascii: "+"): state = .line(.simpleString)
        case UInt8(ascii: "-"): state = .line(.error)
        case UInt8(ascii: ":"): state = .line(.integer)
        case UInt8(ascii: "$"): state = .line(.bulkLength)
        case UInt8(ascii: "*"): state = .line(.arrayLength)
        case UInt8(ascii: "_"), UInt8(ascii: ","), UInt8(ascii: "#"), UInt8(ascii: "!"), UInt8(ascii: "="),
             UInt8(ascii: "("), UInt8(ascii: "%"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "|"):
            return .fail(.protocolViolation("it sent a RESP3 reply (type \"\(Character(Unicode.Scalar(byte)))\") on a RESP2 connection"))
        default:
            return .fail(.protocolViolation("it sent byte \(Self.hex(byte)) where a reply's type byte belongs"))
        }
        return .proceed
    }

    private mutating func readLine(_ kind: LineKind) -> Step {
        let maximum = limits.maxLineLength
        let available = buffer.readableBytes
        let newline = buffer.withUnsafeReadableBytes { bytes in
            bytes[searchedLineBytes...].firstIndex(of: UInt8(ascii: "\n"))
        }
        // The line is the bytes before CR LF: with no LF among the first maximum + 2 bytes it
        // is longer than the limit however the rest comes.
        guard let newline, newline <= maximum + 1 else {
            searchedLineBytes = available
            if available > maximum + 1 || newline != nil {
                return .fail(.limitExceeded("A line of more than \(maximum) bytes", limit: "maxLineLength", maximum: maximum))
            }
            return .needMore
        }
        searchedLineBytes = 0
        guard newline > 0, buffer.getInteger(at: buffer.readerIndex + newline - 1, as: UInt8.self) == UInt8(ascii: "\r") else {
            return .fail(.protocolViolation("it ended a line with LF alone, without CR"))
        }
        let line = buffer.readSlice(length: newline - 1)!
        buffer.moveReaderIndex(forwardBy: 2)
        replyBytes += newline + 1
        if line.readableBytesView.contains(UInt8(ascii: "\r")) {
            return .fail(.protocolViolation("it sent a CR inside a line"))
        }
        if let failure = checkReplyBytes() { return failure }
        return lineRead(kind, line)
    }

    private mutating func lineRead(_ kind: LineKind, _ line: ByteBuffer) -> Step {
        switch kind {
        case .simpleString: return .element(.simpleString(String(buffer: line)))
        case .error: return .element(.error(String(buffer: line)))
        case .integer:
            guard let value = Self.integer(line) else { return .fail(Self.notAnInteger("an integer reply")) }
            return .element(.integer(value))
        case .bulkLength:
            guard let length = Self.integer(line) else { return .fail(Self.notAnInteger("a bulk string's length")) }
            return bulkHeader(length)
        case .arrayLength:
            guard let count = Self.integer(line) else { return .fail(Self.notAnInteger("an array's length")) }
            return arrayHeader(count)
        }
    }

    private mutating func bulkHeader(_ length: Int64) -> Step {
        if length == -1 { return .element(.bulkString(nil)) }
        guard length >= 0 else { return .fail(.protocolViolation("it sent a bulk string of length \(length)")) }
        let maximum = limits.maxBulkLength
        guard length <= maximum else {
            return .fail(.limitExceeded("A bulk string of \(length) bytes", limit: "maxBulkLength", maximum: maximum))
        }
        replyBytes += Int(length) + 2
        if let failure = checkReplyBytes() { return failure }
        state = .bulkBody(length: Int(length))
        return .proceed
    }

    private mutating func arrayHeader(_ count: Int64) -> Step {
        if count == -1 { return .element(.array(nil)) }
        guard count >= 0 else { return .fail(.protocolViolation("it sent an array of length \(count)")) }
        let maximum = limits.maxArrayElements
        guard count <= maximum else {
            return .fail(.limitExceeded("An array of \(count) elements", limit: "maxArrayElements", maximum: maximum))
        }
        if count == 0 { return .element(.array([])) }
        guard open.count < limits.maxNestingDepth else {
            return .fail(.limitExceeded("An array nested \(open.count + 1) deep", limit: "maxNestingDepth",
                                        maximum: limits.maxNestingDepth))
        }
        var elements: [RESPValue] = []
        // Not the announced count: a hostile header must not reserve memory its bytes never fill.
        elements.reserveCapacity(min(Int(count), 64))
        open.append(OpenArray(remaining: Int(count), elements: elements))
        state = .typeByte
        return .proceed
    }

    private mutating func readBulkBody(_ length: Int) -> Step {
        guard buffer.readableBytes >= length + 2 else { return .needMore }
        let body = buffer.readSlice(length: length)!
        guard buffer.readInteger(as: UInt16.self) == 0x0D0A else {
            return .fail(.protocolViolation("it did not end a bulk string of \(length) bytes with CR LF"))
        }
        return .element(.bulkString(body))
    }

    /// Puts a complete element into the array it belongs to; returns the reply when it was the
    /// last element of the outermost array, or a reply of its own.
    private mutating func close(_ element: RESPValue) -> RESPValue? {
        state = .typeByte
        var element = element
        while var array = open.popLast() {
            array.elements.append(element)
            array.remaining -= 1
            if array.remaining > 0 {
                open.append(array)
                return nil
            }
            element = .array(array.elements)
        }
        replyBytes = 0
        return element
    }

    private func checkReplyBytes() -> Step? {
        guard replyBytes > limits.maxReplyBytes else { return nil }
        return .fail(.limitExceeded("A reply of more than \(limits.maxReplyBytes) bytes", limit: "maxReplyBytes",
                                    maximum: limits.maxReplyBytes))
    }

    /// A decimal Int64 as RESP writes it: an optional minus sign, then digits; nil otherwise.
    static func integer(_ line: ByteBuffer) -> Int64? {
        let digits = line.readableBytesView
        var index = digits.startIndex
        let negative = digits.first == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < digits.endIndex else { return nil }
        var value: Int64 = 0
        while index < digits.endIndex {
            let digit = digits[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(Int64(digit))
                                             : shifted.addingReportingOverflow(Int64(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
            index += 1
        }
        return value
    }

    private static func notAnInteger(_ what: String) -> RedisError {
        .protocolViolation("it sent \(what) that is not a 64-bit decimal integer")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}
