import NIOCore

/// One direction of a live connection, from TCP segments to WebSocket events: reassembly, then
/// the HTTP head (when the stream starts with one), then WebSocket frames; or, for a stream whose
/// start was not captured, a search for the first frame boundary (``WebSocketResync``).
struct SniffedDirection {
    enum Stage {
        /// No payload yet.
        case start
        /// Parsing the HTTP request or response head.
        case httpHead(HTTPUpgradeParser)
        /// The head is parsed; waiting to know whether the server switched protocols.
        case afterHead(pending: ByteBuffer)
        /// Looking for a WebSocket frame boundary mid-stream; bytes seen so far.
        case searching(ByteBuffer)
        case webSocket(WebSocketMessageParser)
        case stopped
    }

    /// What the stream delivered.
    enum Output {
        case request(HTTPRequestHead)
        case response(HTTPResponseHead)
        case webSocket(WebSocketMessageParser.Output)
        /// The stream did not start with HTTP: the capture began mid-session.
        case midSession
        case failed(CaptureError)
    }

    let sender: WebSocketMessageParser.Sender
    let limits: CaptureLimits
    var reassembler: TCPStreamReassembler
    var stage = Stage.start
    var closed = false

    init(sender: WebSocketMessageParser.Sender, limits: CaptureLimits) {
        self.sender = sender
        self.limits = limits
        reassembler = TCPStreamReassembler(maxOutOfOrderBytes: limits.maxOutOfOrderBytesPerDirection)
    }

    mutating func receive(_ segment: TCPSegment) -> [Output] {
        if segment.flags.contains(.fin) || segment.flags.contains(.rst) { closed = true }
        var outputs: [Output] = []
        for output in reassembler.receive(segment) {
            switch output {
            case .bytes(let chunk): outputs += consume(chunk.bytes)
            case .gap(let error, _, _):
                stage = .stopped
                outputs.append(.failed(error))
            }
        }
        return outputs
    }

    /// The server answered: switch both directions to WebSocket frames (after a 101) or stop.
    mutating func upgrade(switched: Bool) -> [Output] {
        guard case .afterHead(let pending) = stage else { return [] }
        guard switched else {
            stage = .stopped
            return []
        }
        stage = .webSocket(WebSocketMessageParser(sender: sender, maxMessageBytes: limits.maxWebSocketMessageBytes))
        return consume(pending)
    }

    private mutating func consume(_ bytes: ByteBuffer) -> [Output] {
        switch stage {
        case .start:
            let looksHTTP = sender == .client
                ? HTTPUpgradeParser.looksLikeRequest(bytes) : HTTPUpgradeParser.looksLikeResponse(bytes)
            if looksHTTP {
                stage = .httpHead(HTTPUpgradeParser(maxHeadBytes: limits.maxHTTPHeadBytes))
                return consume(bytes)
            }
            stage = .searching(ByteBuffer())
            return [.midSession] + consume(bytes)
        case .httpHead(var parser):
            do {
                if sender == .client {
                    guard let (head, rest) = try parser.parseRequest(appending: bytes) else {
                        stage = .httpHead(parser)
                        return []
                    }
                    stage = .afterHead(pending: rest)
                    return [.request(head)]
                }
                guard let (head, rest) = try parser.parseResponse(appending: bytes) else {
                    stage = .httpHead(parser)
                    return []
                }
                stage = .afterHead(pending: rest)
                return [.response(head)] + upgrade(switched: head.isSwitchingProtocols)
            } catch let error as CaptureError {
                stage = .stopped
                return [.failed(error)]
            } catch {
                preconditionFailure("HTTPUpgradeParser throws only CaptureError")
            }
        case .afterHead(var pending):
            pending.writeImmutableBuffer(bytes)
            stage = .afterHead(pending: pending)
            return []
        case .searching(var seen):
            seen.writeImmutableBuffer(bytes)
            guard let start = WebSocketResync.frameStart(in: seen, sender: sender, maxMessageBytes: limits.maxWebSocketMessageBytes) else {
                stage = seen.readableBytes > 1 << 20 ? .stopped : .searching(seen)
                return []
            }
            seen.moveReaderIndex(forwardBy: start)
            stage = .webSocket(WebSocketMessageParser(sender: sender, maxMessageBytes: limits.maxWebSocketMessageBytes))
            return consume(seen)
        case .webSocket(var parser):
            let outputs = parser.parse(bytes)
            stage = .webSocket(parser)
            return outputs.map { .webSocket($0) }
        case .stopped:
            return []
        }
    }
}
