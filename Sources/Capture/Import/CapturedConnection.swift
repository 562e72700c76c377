import NIOCore

/// One TCP connection found in a capture, with what it carried.
public struct CapturedConnection: Sendable {
    /// What the connection turned out to carry.
    public enum Kind: Sendable, Hashable {
        /// An HTTP upgrade answered with 101; ``CapturedConnection/events`` holds the WebSocket traffic.
        case webSocket
        /// HTTP without a successful upgrade (refused, or the response is missing).
        case http
        /// Neither direction starts like HTTP/1.x: another protocol, TLS, or a capture that
        /// started after the handshake. Only TCP-level events are reported.
        case other
    }

    /// How the client was told apart from the server.
    public enum RoleEvidence: Sendable, Hashable {
        /// It sent the SYN.
        case syn
        /// The other side sent the SYN-ACK.
        case synAck
        /// It sent an HTTP request (the handshake was not captured).
        case httpRequest
        /// The other side sent an HTTP response.
        case httpResponse
        /// A guess: the server is the side with the lower port number.
        case portNumbers
    }

    /// 0-based, in the order of the connections' first packets in the file.
    public var index: Int
    public var client: Endpoint
    public var server: Endpoint
    public var kind: Kind
    public var roleEvidence: RoleEvidence
    public var request: HTTPRequestHead?
    public var response: HTTPResponseHead?
    /// The body of a non-101 response, if one was captured (per `Content-Length`, or up to the
    /// end of the stream; chunked encoding is not decoded).
    public var responseBody: ByteBuffer?
    /// Events of both directions, ordered by ``CapturedEvent/time`` and then by file position;
    /// each direction's own events keep their stream order.
    public var events: [CapturedEvent]
    /// Contiguous payload bytes reassembled in each direction, HTTP included.
    public var clientToServerBytes: Int64
    public var serverToClientBytes: Int64
    /// 0-based file position of the connection's first packet.
    public var firstPacketIndex: Int
    /// When the HTTP request was sent, if known (capture files record it; pcap imports leave it
    /// nil, their events carry packet times).
    public var handshakeTime: CaptureTimestamp?

    public init(
        index: Int, client: Endpoint, server: Endpoint, kind: Kind, roleEvidence: RoleEvidence,
        request: HTTPRequestHead? = nil, response: HTTPResponseHead? = nil, responseBody: ByteBuffer? = nil,
        events: [CapturedEvent] = [], clientToServerBytes: Int64 = 0, serverToClientBytes: Int64 = 0,
        firstPacketIndex: Int = 0
    ) {
        self.index = index
        self.client = client
        self.server = server
        self.kind = kind
        self.roleEvidence = roleEvidence
        self.request = request
        self.response = response
        self.responseBody = responseBody
        self.events = events
        self.clientToServerBytes = clientToServerBytes
        self.serverToClientBytes = serverToClientBytes
        self.firstPacketIndex = firstPacketIndex
    }

    /// The events sent in one direction, in stream order.
    public func events(_ direction: CaptureDirection) -> [CapturedEvent] {
        events.filter { $0.direction == direction }
    }
}
