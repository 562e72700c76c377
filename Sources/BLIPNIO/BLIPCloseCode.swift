import BLIPCore
import NIOWebSocket

/// How an endpoint's failure becomes a WebSocket CLOSE: the one place where errors turn into
/// close codes for BLIP endpoints (wire-format reference §7).
///
/// - A fatal ``BLIPError`` closes with 1011 "Unexpected exception", as LiteCore does for a frame it
///   cannot process; frame-level (non-fatal) errors never close.
/// - A WebSocket frame over the size limit closes with 1009; any other WebSocket protocol error
///   with 1002.
/// - Anything else is an internal failure: 1011.
public enum BLIPCloseCode {
    public static func forError(_ error: any Error) -> (code: WebSocketErrorCode, reason: String) {
        switch error {
        case let error as BLIPError:
            return (.unexpectedServerError, "Unexpected exception: \(error.description)")
        case NIOWebSocketError.invalidFrameLength:
            return (.messageTooLarge, "WebSocket message too big")
        case is NIOWebSocketError:
            return (.protocolError, "WebSocket protocol error")
        default:
            return (.unexpectedServerError, "Internal exception")
        }
    }

    /// The numeric code as sent on the wire.
    public static func number(_ code: WebSocketErrorCode) -> UInt16 {
        UInt16(webSocketErrorCode: code)
    }
}
