import NIOCore

/// Parses the HTTP/1.x head at the start of one direction of a connection: the client's request
/// head or the server's response head, fed in chunks as they are reassembled.
///
/// - Only the head is parsed; whatever follows it is handed back untouched as the remainder
///   (WebSocket frames after a 101, or a body).
/// - Lenient where captures of real peers differ harmlessly: bare-LF line ends, empty lines before
///   the request line, obsolete folded header lines (joined with one space), no reason phrase.
/// - Strict where the bytes are clearly not HTTP: the request must start with a method token and
///   the response with `HTTP/`, so a non-HTTP stream fails fast instead of filling the buffer.
/// - A head longer than `maxHeadBytes` is an error (``CaptureError/Code/httpHeadTooLarge``).
/// - Does not parse bodies, chunked encoding, or later requests on a kept-alive connection.
public struct HTTPUpgradeParser: Sendable {
    public let maxHeadBytes: Int
    private var buffer = ByteBuffer()
    private var scannedBytes = 0

    public init(maxHeadBytes: Int = CaptureLimits.default.maxHTTPHeadBytes) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Appends `bytes`. Returns the request head and the bytes after it once the head is complete,
    /// `nil` while more bytes are needed.
    public mutating func parseRequest(
        appending bytes: ByteBuffer
    ) throws -> (head: HTTPRequestHead, remainder: ByteBuffer)? {
        guard let lines = try appendAndTakeHead(bytes, looksRight: Self.mayStartRequest) else { return nil }
        return (try Self.requestHead(from: lines), takeRemainder())
    }

    /// Appends `bytes`. Returns the response head and the bytes after it once the head is complete,
    /// `nil` while more bytes are needed.
    public mutating func parseResponse(
        appending bytes: ByteBuffer
    ) throws -> (head: HTTPResponseHead, remainder: ByteBuffer)? {
        guard let lines = try appendAndTakeHead(bytes, looksRight: Self.mayStartResponse) else { return nil }
        return (try Self.responseHead(from: lines), takeRemainder())
    }

    /// Whether `bytes` begin like an HTTP/1.x request (`GET `, `POST `, …).
    public static func looksLikeRequest(_ bytes: ByteBuffer) -> Bool {
        let prefix = String(decoding: bytes.readableBytesView.prefix(8), as: UTF8.self)
        return ["GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "]
            .contains { prefix.hasPrefix($0) }
    }

    /// Whether `bytes` begin like an HTTP/1.x response (`HTTP/1.`).
    public static func looksLikeResponse(_ bytes: ByteBuffer) -> Bool {
        bytes.readableBytesView.starts(with: Array("HTTP/1.".utf8))
    }

    // MARK: - Finding the head

    private mutating func appendAndTakeHead(
        _ bytes: ByteBuffer, looksRight: (ByteBufferView) -> Bool
    ) throws -> [String]? {
        var bytes = bytes
        buffer.writeBuffer(&bytes)
        if scannedBytes == 0 { skipLeadingLineBreaks() }
        guard looksRight(buffer.readableBytesView) else {
            let sample = String(decoding: buffer.readableBytesView.prefix(16), as: UTF8.self)
            throw CaptureError.malformedHTTPHead("the stream does not start like HTTP/1.x (\(sample.debugDescription))")
        }
        guard let headLength = findEndOfHead() else {
            if buffer.readableBytes > maxHeadBytes { throw CaptureError.httpHeadTooLarge(limit: maxHeadBytes) }
            return nil
        }
        guard headLength <= maxHeadBytes else { throw CaptureError.httpHeadTooLarge(limit: maxHeadBytes) }
        // Split bytes, not a String: Swift treats "\r\n" as one Character.
        let head = buffer.readBytes(length: headLength) ?? []
        let lines = head.split(separator: 0x0A, omittingEmptySubsequences: false)
            .map { String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self) }
        return Array(lines.prefix { !$0.isEmpty })
    }

    private mutating func skipLeadingLineBreaks() {
        while let byte = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self), byte == 0x0D || byte == 0x0A {
            buffer.moveReaderIndex(forwardBy: 1)
        }
    }

    /// The length of the head including the empty line that ends it, if it is all buffered.
    private mutating func findEndOfHead() -> Int? {
        let view = buffer.readableBytesView
        var index = view.startIndex + max(0, scannedBytes - 2)
        while let lineFeed = view[index...].firstIndex(of: 0x0A) {
            var next = view.index(after: lineFeed)
            if next < view.endIndex, view[next] == 0x0D { next = view.index(after: next) }
            if next < view.endIndex, view[next] == 0x0A {
                return view.distance(from: view.startIndex, to: next) + 1
            }
            if next >= view.endIndex { break }
            index = view.index(after: lineFeed)
        }
        scannedBytes = view.count
        return nil
    }

    private mutating func takeRemainder() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer.slice()
    }

    private static func mayStartRequest(_ view: ByteBufferView) -> Bool {
        // A method token (RFC 9110 §9.1) of at most 20 characters, then a space.
        for (position, byte) in view.prefix(21).enumerated() {
            if byte == 0x20 { return position > 0 }
            let isTokenCharacter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || (0x30...0x39).contains(byte) || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            if !isTokenCharacter { return false }
        }
        return view.count < 21
    }

    private static func mayStartResponse(_ view: ByteBufferView) -> Bool {
        let expected = Array("HTTP/".utf8)
        return zip(view.prefix(expected.count), expected).allSatisfy { $0 == $1 }
    }

    // MARK: - Parsing the lines

    private static func requestHead(from lines: [String]) throws -> HTTPRequestHead {
        let parts = lines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else {
            throw CaptureError.malformedHTTPHead("bad request line \((lines.first ?? "").debugDescription)")
        }
        return HTTPRequestHead(
            method: String(parts[0]), target: String(parts[1]), version: String(parts[2]),
            headers: try headerFields(from: lines.dropFirst())
        )
    }

    private static func responseHead(from lines: [String]) throws -> HTTPResponseHead {
        let statusLine = lines.first ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3,
              let status = Int(parts[1]), status >= 100 else {
            throw CaptureError.malformedHTTPHead("bad status line \(statusLine.debugDescription)")
        }
        return HTTPResponseHead(
            version: String(parts[0]), status: status, reason: parts.count > 2 ? String(parts[2]) : "",
            headers: try headerFields(from: lines.dropFirst())
        )
    }

    private static func headerFields(from lines: ArraySlice<String>) throws -> HTTPHeaderFields {
        var fields: [HTTPHeaderFields.Field] = []
        for line in lines {
            if line.first == " " || line.first == "\t" {
                guard !fields.isEmpty else {
                    throw CaptureError.malformedHTTPHead("a folded header line comes before any header")
                }
                fields[fields.count - 1].value += " " + line.trimmingSpaces
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw CaptureError.malformedHTTPHead("header line without a name and colon \(line.debugDescription)")
            }
            fields.append(.init(
                name: String(line[..<colon].trimmingSpaces),
                value: String(line[line.index(after: colon)...].trimmingSpaces)
            ))
        }
        return HTTPHeaderFields(fields)
    }
}
