import NIOCore

/// Decoding a reassembled connection: which side is the client, the HTTP heads, and then
/// either WebSocket traffic (after a 101) or the response body.
extension CapturedConnection {
    typealias Chunk = TCPStreamReassembler.Chunk

    /// `nil` if the connection carried no payload in either direction.
    init?(decoding connection: ReassembledConnection, index: Int, limits: CaptureLimits) {
        let (clientSide, evidence) = Self.clientSide(of: connection)
        let clientHalf = connection.halves[clientSide]
        let serverHalf = connection.halves[1 - clientSide]
        guard clientHalf.byteCount + serverHalf.byteCount > 0 else { return nil }
        self.init(
            index: index, client: clientHalf.sender, server: serverHalf.sender, kind: .other, roleEvidence: evidence,
            clientToServerBytes: clientHalf.byteCount, serverToClientBytes: serverHalf.byteCount,
            firstPacketIndex: connection.firstPacketIndex
        )
        var clientLog = DirectionEventLog(.clientToServer)
        var serverLog = DirectionEventLog(.serverToClient)
        let isHTTP = HTTPUpgradeParser.looksLikeRequest(clientHalf.prefix(8))
            || HTTPUpgradeParser.looksLikeResponse(serverHalf.prefix(8))
        if isHTTP {
            decodeHTTP(
                client: clientHalf, server: serverHalf, limits: limits, clientLog: &clientLog, serverLog: &serverLog
            )
        }
        Self.finish(&clientLog, half: clientHalf)
        Self.finish(&serverLog, half: serverHalf)
        events = DirectionEventLog.merge(clientLog, serverLog)
    }

    private mutating func decodeHTTP(
        client: ReassembledConnection.Half, server: ReassembledConnection.Half, limits: CaptureLimits,
        clientLog: inout DirectionEventLog, serverLog: inout DirectionEventLog
    ) {
        kind = .http
        var requestParser = HTTPUpgradeParser(maxHeadBytes: limits.maxHTTPHeadBytes)
        let requestPart = Self.parseHead(client.chunks, log: &clientLog) {
            try requestParser.parseRequest(appending: $0)
        }
        var responseParser = HTTPUpgradeParser(maxHeadBytes: limits.maxHTTPHeadBytes)
        let responsePart = Self.parseHead(server.chunks, log: &serverLog) {
            try responseParser.parseResponse(appending: $0)
        }
        request = requestPart?.head
        response = responsePart?.head
        guard let responsePart else { return }
        guard responsePart.head.isSwitchingProtocols else {
            responseBody = Self.body(
                of: responsePart.head, in: responsePart.rest, limit: limits.maxHTTPBodyBytes, log: &serverLog
            )
            return
        }
        kind = .webSocket
        let extensions = responsePart.head.headers.listValues(for: "Sec-WebSocket-Extensions")
        let reservedBits: UInt8 = extensions.isEmpty ? 0 : 0b111
        if let requestPart {
            Self.decodeWebSocket(requestPart.rest, sender: .client, reservedBits: reservedBits, limits: limits,
                                 endOfStream: client.gap == nil, log: &clientLog)
        }
        Self.decodeWebSocket(responsePart.rest, sender: .server, reservedBits: reservedBits, limits: limits,
                             endOfStream: server.gap == nil, log: &serverLog)
    }

    // MARK: - Roles

    /// Which half the client sent, and why we think so.
    static func clientSide(of connection: ReassembledConnection) -> (Int, RoleEvidence) {
        let halves = connection.halves
        if let side = halves.indices.first(where: { halves[$0].sentSYN }) { return (side, .syn) }
        if let side = halves.indices.first(where: { halves[$0].sentSYNACK }) { return (1 - side, .synAck) }
        let prefixes = halves.map { $0.prefix(8) }
        if let side = prefixes.indices.first(where: { HTTPUpgradeParser.looksLikeRequest(prefixes[$0]) }) {
            return (side, .httpRequest)
        }
        if let side = prefixes.indices.first(where: { HTTPUpgradeParser.looksLikeResponse(prefixes[$0]) }) {
            return (1 - side, .httpResponse)
        }
        return (halves[0].sender.port < halves[1].sender.port ? 1 : 0, .portNumbers)
    }

    // MARK: - HTTP

    /// Feeds chunks to `parse` until it returns a head. `rest` holds the bytes after the head,
    /// the first of them tagged like the chunk that completed the head.
    private static func parseHead<Head>(
        _ chunks: [Chunk], log: inout DirectionEventLog,
        parse: (ByteBuffer) throws -> (head: Head, remainder: ByteBuffer)?
    ) -> (head: Head, rest: ArraySlice<Chunk>)? {
        for (position, chunk) in chunks.enumerated() {
            do {
                guard let (head, remainder) = try parse(chunk.bytes) else { continue }
                var rest = chunks[(position + 1)...]
                if remainder.readableBytes > 0 {
                    var first = chunk
                    first.streamOffset += Int64(chunk.bytes.readableBytes - remainder.readableBytes)
                    first.bytes = remainder
                    rest.insert(first, at: rest.startIndex)
                }
                return (head, rest)
            } catch let error as CaptureError {
                log.append(.error(error), time: chunk.timestamp, packetIndex: chunk.packetIndex)
                return nil
            } catch {
                preconditionFailure("HTTPUpgradeParser throws only CaptureError")
            }
        }
        return nil
    }

    /// The body per `Content-Length`, or everything that follows when there is none.
    private static func body(
        of head: HTTPResponseHead, in chunks: ArraySlice<Chunk>, limit: Int, log: inout DirectionEventLog
    ) -> ByteBuffer? {
        if head.status < 200 || head.status == 204 || head.status == 304 { return nil }
        let available = chunks.reduce(0) { $0 + $1.bytes.readableBytes }
        let wanted = head.contentLength ?? available
        guard wanted <= limit else {
            if let last = chunks.last {
                let error = CaptureError.httpBodyTooLarge(limit: limit, size: wanted)
                log.append(.error(error), time: last.timestamp, packetIndex: last.packetIndex)
            }
            return nil
        }
        var body = ByteBuffer()
        for chunk in chunks where body.readableBytes < wanted {
            body.writeImmutableBuffer(chunk.bytes.getSlice(
                at: chunk.bytes.readerIndex, length: min(wanted - body.readableBytes, chunk.bytes.readableBytes)
            )!)
        }
        return body
    }

    // MARK: - WebSocket

    private static func decodeWebSocket(
        _ chunks: ArraySlice<Chunk>, sender: WebSocketMessageParser.Sender, reservedBits: UInt8,
        limits: CaptureLimits, endOfStream: Bool, log: inout DirectionEventLog
    ) {
        var parser = WebSocketMessageParser(
            sender: sender, maxMessageBytes: limits.maxWebSocketMessageBytes,
            allowedReservedBits: reservedBits, streamOffset: chunks.first?.streamOffset ?? 0
        )
        var time = CaptureTimestamp.zero, packetIndex = 0
        for chunk in chunks where !log.isStopped {
            (time, packetIndex) = (chunk.timestamp, chunk.packetIndex)
            for output in parser.parse(chunk.bytes) {
                log.append(Self.eventKind(output), time: time, packetIndex: packetIndex)
            }
        }
        // After a gap the reassembly error says what happened; an "incomplete message" would only echo it.
        guard endOfStream else { return }
        for output in parser.finish() {
            log.append(Self.eventKind(output), time: time, packetIndex: packetIndex)
        }
    }

    private static func eventKind(_ output: WebSocketMessageParser.Output) -> CapturedEvent.Kind {
        switch output {
        case let .message(opcode, payload): .message(opcode: opcode, payload: payload)
        case let .ping(payload): .ping(payload)
        case let .pong(payload): .pong(payload)
        case let .close(code, reason): .close(code: code, reason: reason)
        case let .error(error): .error(error)
        }
    }

    // MARK: - TCP

    /// Appends what the TCP layer reported last: bytes lost for good, then FIN or RST.
    private static func finish(_ log: inout DirectionEventLog, half: ReassembledConnection.Half) {
        if let gap = half.gap {
            log.append(.error(gap.error), time: gap.timestamp, packetIndex: gap.packetIndex)
        }
        if let close = half.close {
            log.append(.tcpClosed(close.kind), time: close.timestamp, packetIndex: close.packetIndex)
        }
    }
}
