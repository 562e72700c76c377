import BLIPCore
import NIOCore

/// Which TCP connection of a relayed session some bytes travelled on.
public enum CaptureLeg: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The same bytes crossed both connections (pass-through, the usual case).
    case both = 0
    /// Only the client ⇄ relay connection carried these bytes (the relay re-encoded the other leg).
    case client = 1
    /// Only the relay ⇄ upstream connection carried these bytes.
    case upstream = 2

    /// Whether bytes recorded with this leg were on `leg`'s connection.
    public func appears(on leg: CaptureLeg) -> Bool { self == .both || leg == .both || self == leg }

    public var description: String {
        switch self {
        case .both: "both"
        case .client: "client"
        case .upstream: "upstream"
        }
    }
}

/// Who ended a session, or sent a WebSocket close.
public enum CaptureSide: UInt8, Sendable, Hashable, CustomStringConvertible {
    case client = 0, upstream = 1, relay = 2

    public var description: String {
        switch self {
        case .client: "client"
        case .upstream: "upstream"
        case .relay: "relay"
        }
    }
}

/// One record of a capture file. The binary layout of each kind is documented on
/// ``CaptureRecord/Kind``; framing and versions on ``CaptureFileHeader``.
public enum CaptureRecord: Sendable {
    /// The WebSocket handshake of the session (secrets redacted, see ``HeaderRedaction``).
    case handshake(Handshake)
    /// One WebSocket binary message: one BLIP frame, unmasked.
    case frame(Frame)
    /// A message's properties as decoded (its first frame, usually).
    case messageHead(MessageHeadRecord)
    /// What the relay's policy decided about a message.
    case verdict(Verdict)
    /// Records the writer's owner could not store (the disk did not keep up and the overflow
    /// policy is `drop`): how many and why. Nothing is lost silently.
    case dropped(Dropped)
    /// A WebSocket close, or the end of the session.
    case close(Close)
    /// Free-form text: rotation, the relay's own remarks.
    case note(time: CaptureTimestamp, text: String)

    /// The record kind byte and body layouts, version 2 (``CaptureFileFormat/recordVersion``).
    /// `time` is a varint of nanoseconds since 1970; `str` and `bytes` are a varint length then
    /// the bytes (UTF-8 for strings); `headers` is a varint count then name `str`, value `str`
    /// pairs; `dir` is one byte (0 client→server, 1 server→client).
    ///
    /// | kind | body |
    /// |---|---|
    /// | 1 handshake | time, session id varint, client address str, request line str, request headers, upstream URL str, response status varint (0 = none), reason str, response headers, has-sub-protocol u8, sub-protocol str if 1 |
    /// | 2 frame | time, dir, leg u8 (0 both, 1 client, 2 upstream), frame bytes |
    /// | 3 messageHead | time, dir, number varint, flags u8, properties as on the BLIP wire (`uvarint(P)` + block) |
    /// | 4 verdict | time, dir, number varint, action str, reason str |
    /// | 5 dropped | time, count varint, reason str |
    /// | 6 close | time, side u8 (0 client, 1 upstream, 2 relay), code varint (0 = none, else code + 1), reason str |
    /// | 7 note | time, text str |
    ///
    /// Version 1 differs only in: frame has no leg (read as `both`); handshake has no sub-protocol
    /// (read from the response's `Sec-WebSocket-Protocol`). Unknown kinds are skipped by readers.
    public enum Kind: UInt8, Sendable, CaseIterable {
        case handshake = 1, frame = 2, messageHead = 3, verdict = 4, dropped = 5, close = 6, note = 7
    }

    public var kind: Kind {
        switch self {
        case .handshake: .handshake
        case .frame: .frame
        case .messageHead: .messageHead
        case .verdict: .verdict
        case .dropped: .dropped
        case .close: .close
        case .note: .note
        }
    }

    public var time: CaptureTimestamp {
        switch self {
        case .handshake(let record): record.time
        case .frame(let record): record.time
        case .messageHead(let record): record.time
        case .verdict(let record): record.time
        case .dropped(let record): record.time
        case .close(let record): record.time
        case .note(let time, _): time
        }
    }

    public struct Handshake: Sendable, Hashable {
        public var time: CaptureTimestamp
        public var sessionID: UInt64
        /// `ip:port` of the client as the relay saw it (`[v6]:port` for IPv6).
        public var clientAddress: String
        /// For example `GET /db/_blipsync?client=sgr2 HTTP/1.1`.
        public var requestLine: String
        /// The client's request headers, redacted.
        public var requestHeaders: HTTPHeaderFields
        /// For example `ws://127.0.0.1:4984/db/_blipsync`.
        public var upstreamURL: String
        /// The upstream's status (101 on success); 0 when it never answered.
        public var responseStatus: Int
        public var responseReason: String
        /// The upstream's response headers, redacted.
        public var responseHeaders: HTTPHeaderFields
        /// The sub-protocol the upstream chose, e.g. `BLIP_3+CBMobile_3`.
        public var subprotocol: String?

        public init(
            time: CaptureTimestamp, sessionID: UInt64, clientAddress: String, requestLine: String,
            requestHeaders: HTTPHeaderFields, upstreamURL: String, responseStatus: Int, responseReason: String,
            responseHeaders: HTTPHeaderFields, subprotocol: String?
        ) {
            self.time = time
            self.sessionID = sessionID
            self.clientAddress = clientAddress
            self.requestLine = requestLine
            self.requestHeaders = requestHeaders
            self.upstreamURL = upstreamURL
            self.responseStatus = responseStatus
            self.responseReason = responseReason
            self.responseHeaders = responseHeaders
            self.subprotocol = subprotocol
        }
    }

    public struct Frame: Sendable {
        public var time: CaptureTimestamp
        public var direction: BLIPDirection
        public var leg: CaptureLeg
        /// The BLIP frame exactly as it crossed that leg: one WebSocket message payload, unmasked.
        public var bytes: ByteBuffer

        public init(time: CaptureTimestamp, direction: BLIPDirection, leg: CaptureLeg = .both, bytes: ByteBuffer) {
            self.time = time
            self.direction = direction
            self.leg = leg
            self.bytes = bytes
        }
    }

    public struct MessageHeadRecord: Sendable {
        public var time: CaptureTimestamp
        public var direction: BLIPDirection
        public var number: MessageNumber
        /// The message's flags; the type is ``FrameFlags/type``.
        public var flags: FrameFlags
        public var properties: Properties

        public init(time: CaptureTimestamp, direction: BLIPDirection, number: MessageNumber, flags: FrameFlags,
                    properties: Properties) {
            self.time = time
            self.direction = direction
            self.number = number
            self.flags = flags
            self.properties = properties
        }
    }

    public struct Verdict: Sendable, Hashable {
        public var time: CaptureTimestamp
        public var direction: BLIPDirection
        public var number: MessageNumber
        /// The policy's action, e.g. `forward`, `deny`, `delay`, `drop`.
        public var action: String
        public var reason: String

        public init(time: CaptureTimestamp, direction: BLIPDirection, number: MessageNumber, action: String,
                    reason: String) {
            self.time = time
            self.direction = direction
            self.number = number
            self.action = action
            self.reason = reason
        }
    }

    public struct Dropped: Sendable, Hashable {
        public var time: CaptureTimestamp
        public var count: UInt64
        public var reason: String

        public init(time: CaptureTimestamp, count: UInt64, reason: String) {
            self.time = time
            self.count = count
            self.reason = reason
        }
    }

    public struct Close: Sendable, Hashable {
        public var time: CaptureTimestamp
        public var side: CaptureSide
        /// The WebSocket close code; `nil` for a close without one, or a dropped TCP connection.
        public var code: UInt16?
        public var reason: String

        public init(time: CaptureTimestamp, side: CaptureSide, code: UInt16?, reason: String) {
            self.time = time
            self.side = side
            self.code = code
            self.reason = reason
        }
    }
}
