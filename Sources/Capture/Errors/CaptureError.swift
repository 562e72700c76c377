/// The one error type of the `Capture` module.
///
/// Errors that stop a whole import (the file cannot be opened or read, its link type is not
/// supported) are thrown. Errors that concern one direction of one connection (a gap in the TCP
/// stream, a malformed HTTP head, a bad WebSocket frame) are reported as
/// ``CapturedEvent/Kind/error(_:)`` events instead, and only that direction stops.
///
/// `description` is a sentence meant for a person; match on ``code`` in code.
public struct CaptureError: Error, CustomStringConvertible, Sendable, Hashable {
    /// What went wrong, without the details. Stable for programmatic matching.
    public enum Code: Sendable, Hashable {
        case pcapOpenFailed
        case pcapReadFailed
        case unsupportedLinkType
        case missingBytes
        case outOfOrderLimitExceeded
        case malformedHTTPHead
        case httpHeadTooLarge
        case httpBodyTooLarge
        case malformedWebSocketFrame
        case webSocketMessageTooLarge
        case bytesAfterWebSocketClose
        case incompleteWebSocketMessage
        case captureFileOpenFailed
        case captureFileWriteFailed
        case captureFileReadFailed
        case notACaptureFile
        case unsupportedCaptureVersion
        case malformedCaptureRecord
        case captureWriterClosed
        case pcapWriteFailed
        case liveCaptureFailed
    }

    /// Why a WebSocket frame was rejected (RFC 6455 §5).
    enum FrameProblem: Sendable, Hashable {
        case reservedBitsSet(UInt8)
        case reservedOpcode(UInt8)
        case unmaskedClientFrame
        case maskedServerFrame
        case fragmentedControlFrame
        case controlPayloadTooLong(Int)
        case continuationWithoutStart
        case newMessageInsideFragmentedMessage
        case lengthHighBitSet
        case closePayloadOfOneByte
        case closeReasonNotUTF8
    }

    private enum Base: Sendable, Hashable {
        case pcapOpenFailed(path: String, reason: String)
        case pcapReadFailed(reason: String)
        case unsupportedLinkType(UInt32)
        case missingBytes(count: Int64, streamOffset: Int64)
        case outOfOrderLimitExceeded(limit: Int, streamOffset: Int64)
        case malformedHTTPHead(String)
        case httpHeadTooLarge(limit: Int)
        case httpBodyTooLarge(limit: Int, size: Int)
        case malformedWebSocketFrame(frame: Int, streamOffset: Int64, FrameProblem)
        case webSocketMessageTooLarge(frame: Int, streamOffset: Int64, size: Int64, limit: Int)
        case bytesAfterWebSocketClose(count: Int, streamOffset: Int64)
        case incompleteWebSocketMessage(frame: Int, streamOffset: Int64, bufferedBytes: Int)
        case captureFileOpenFailed(path: String, reason: String)
        case captureFileWriteFailed(path: String, reason: String)
        case captureFileReadFailed(path: String, reason: String)
        case notACaptureFile(path: String)
        case unsupportedCaptureVersion(what: String, version: Int, supported: ClosedRange<Int>)
        case malformedCaptureRecord(offset: Int64, reason: String)
        case captureWriterClosed(path: String)
        case pcapWriteFailed(path: String, reason: String)
        case liveCaptureFailed(interface: String, reason: String)
    }

    private let base: Base

    private init(_ base: Base) { self.base = base }

    public var code: Code {
        switch base {
        case .pcapOpenFailed: .pcapOpenFailed
        case .pcapReadFailed: .pcapReadFailed
        case .unsupportedLinkType: .unsupportedLinkType
        case .missingBytes: .missingBytes
        case .outOfOrderLimitExceeded: .outOfOrderLimitExceeded
        case .malformedHTTPHead: .malformedHTTPHead
        case .httpHeadTooLarge: .httpHeadTooLarge
        case .httpBodyTooLarge: .httpBodyTooLarge
        case .malformedWebSocketFrame: .malformedWebSocketFrame
        case .webSocketMessageTooLarge: .webSocketMessageTooLarge
        case .bytesAfterWebSocketClose: .bytesAfterWebSocketClose
        case .incompleteWebSocketMessage: .incompleteWebSocketMessage
        case .captureFileOpenFailed: .captureFileOpenFailed
        case .captureFileWriteFailed: .captureFileWriteFailed
        case .captureFileReadFailed: .captureFileReadFailed
        case .notACaptureFile: .notACaptureFile
        case .unsupportedCaptureVersion: .unsupportedCaptureVersion
        case .malformedCaptureRecord: .malformedCaptureRecord
        case .captureWriterClosed: .captureWriterClosed
        case .pcapWriteFailed: .pcapWriteFailed
        case .liveCaptureFailed: .liveCaptureFailed
        }
    }

    public var description: String {
        switch base {
        case let .pcapOpenFailed(path, reason):
            "Could not open the capture file \(path): \(reason)."
        case let .pcapReadFailed(reason):
            "Could not read a packet from the capture file: \(reason)."
        case let .unsupportedLinkType(type):
            "The capture's link type \(type) is not supported (supported: Ethernet, Linux cooked v1/v2, BSD loopback, raw IP)."
        case let .missingBytes(count, offset):
            "\(count) bytes are missing from the TCP stream at byte \(offset); the capture lost packets or ended before they were retransmitted."
        case let .outOfOrderLimitExceeded(limit, offset):
            "More than \(limit) bytes arrived beyond a hole at byte \(offset) of the TCP stream; the missing bytes were never captured."
        case let .malformedHTTPHead(reason):
            "The HTTP head is malformed: \(reason)."
        case let .httpHeadTooLarge(limit):
            "The HTTP head is longer than the limit of \(limit) bytes."
        case let .httpBodyTooLarge(limit, size):
            "The HTTP body is \(size) bytes long, more than the limit of \(limit); it was not recorded."
        case let .malformedWebSocketFrame(frame, offset, problem):
            "WebSocket frame \(frame) (at byte \(offset) of the TCP stream) is invalid: \(Self.sentence(for: problem))."
        case let .webSocketMessageTooLarge(frame, offset, size, limit):
            "WebSocket frame \(frame) (at byte \(offset) of the TCP stream) makes its message \(size) bytes long, more than the limit of \(limit)."
        case let .bytesAfterWebSocketClose(count, offset):
            "\(count) bytes follow the WebSocket close frame (from byte \(offset) of the TCP stream); they were ignored."
        case let .incompleteWebSocketMessage(frame, offset, buffered):
            "The stream ends inside the WebSocket message that frame \(frame) (at byte \(offset) of the TCP stream) belongs to; \(buffered) bytes of it were captured and dropped."
        case let .captureFileOpenFailed(path, reason):
            "Could not open the BlipScope capture file \(path): \(reason)."
        case let .captureFileWriteFailed(path, reason):
            "Could not write to the BlipScope capture file \(path): \(reason)."
        case let .captureFileReadFailed(path, reason):
            "Could not read the BlipScope capture file \(path): \(reason)."
        case let .notACaptureFile(path):
            "\(path) is not a BlipScope capture file (its first bytes are not the capture magic)."
        case let .unsupportedCaptureVersion(what, version, supported):
            "The \(what) has format version \(version); this build reads versions \(supported.lowerBound) to \(supported.upperBound)."
        case let .malformedCaptureRecord(offset, reason):
            "The capture record at byte \(offset) is malformed: \(reason)."
        case let .captureWriterClosed(path):
            "The capture writer for \(path) is already closed."
        case let .pcapWriteFailed(path, reason):
            "Could not write the pcap file \(path): \(reason)."
        case let .liveCaptureFailed(interface, reason):
            "Could not capture live on interface \(interface): \(reason)."
        }
    }

    private static func sentence(for problem: FrameProblem) -> String {
        switch problem {
        case let .reservedBitsSet(bits):
            "reserved bits \(String(bits, radix: 2)) are set but no extension was negotiated"
        case let .reservedOpcode(opcode): "opcode \(opcode) is reserved"
        case .unmaskedClientFrame: "a frame from the client is not masked"
        case .maskedServerFrame: "a frame from the server is masked"
        case .fragmentedControlFrame: "a control frame has FIN clear"
        case let .controlPayloadTooLong(length): "a control frame carries \(length) bytes (at most 125 allowed)"
        case .continuationWithoutStart: "a continuation frame arrived outside a fragmented message"
        case .newMessageInsideFragmentedMessage: "a new data frame started before the fragmented message ended"
        case .lengthHighBitSet: "the 64-bit payload length has its most significant bit set"
        case .closePayloadOfOneByte: "a close frame carries a single byte (a status code needs two)"
        case .closeReasonNotUTF8: "the close reason is not valid UTF-8"
        }
    }
}

extension CaptureError {
    static func pcapOpenFailed(path: String, reason: String) -> Self { .init(.pcapOpenFailed(path: path, reason: reason)) }
    static func pcapReadFailed(reason: String) -> Self { .init(.pcapReadFailed(reason: reason)) }
    static func unsupportedLinkType(_ type: UInt32) -> Self { .init(.unsupportedLinkType(type)) }
    static func missingBytes(count: Int64, streamOffset: Int64) -> Self {
        .init(.missingBytes(count: count, streamOffset: streamOffset))
    }
    static func outOfOrderLimitExceeded(limit: Int, streamOffset: Int64) -> Self {
        .init(.outOfOrderLimitExceeded(limit: limit, streamOffset: streamOffset))
    }
    static func malformedHTTPHead(_ reason: String) -> Self { .init(.malformedHTTPHead(reason)) }
    static func httpHeadTooLarge(limit: Int) -> Self { .init(.httpHeadTooLarge(limit: limit)) }
    static func httpBodyTooLarge(limit: Int, size: Int) -> Self {
        .init(.httpBodyTooLarge(limit: limit, size: size))
    }
    static func malformedWebSocketFrame(frame: Int, streamOffset: Int64, _ problem: FrameProblem) -> Self {
        .init(.malformedWebSocketFrame(frame: frame, streamOffset: streamOffset, problem))
    }
    static func webSocketMessageTooLarge(frame: Int, streamOffset: Int64, size: Int64, limit: Int) -> Self {
        .init(.webSocketMessageTooLarge(frame: frame, streamOffset: streamOffset, size: size, limit: limit))
    }
    static func incompleteWebSocketMessage(frame: Int, streamOffset: Int64, bufferedBytes: Int) -> Self {
        .init(.incompleteWebSocketMessage(frame: frame, streamOffset: streamOffset, bufferedBytes: bufferedBytes))
    }
    static func bytesAfterWebSocketClose(count: Int, streamOffset: Int64) -> Self {
        .init(.bytesAfterWebSocketClose(count: count, streamOffset: streamOffset))
    }
    static func captureFileOpenFailed(path: String, reason: String) -> Self {
        .init(.captureFileOpenFailed(path: path, reason: reason))
    }
    static func captureFileWriteFailed(path: String, reason: String) -> Self {
        .init(.captureFileWriteFailed(path: path, reason: reason))
    }
    static func captureFileReadFailed(path: String, reason: String) -> Self {
        .init(.captureFileReadFailed(path: path, reason: reason))
    }
    static func notACaptureFile(path: String) -> Self { .init(.notACaptureFile(path: path)) }
    static func unsupportedCaptureVersion(what: String, version: Int, supported: ClosedRange<Int>) -> Self {
        .init(.unsupportedCaptureVersion(what: what, version: version, supported: supported))
    }
    static func malformedCaptureRecord(offset: Int64, reason: String) -> Self {
        .init(.malformedCaptureRecord(offset: offset, reason: reason))
    }
    static func captureWriterClosed(path: String) -> Self { .init(.captureWriterClosed(path: path)) }
    static func pcapWriteFailed(path: String, reason: String) -> Self { .init(.pcapWriteFailed(path: path, reason: reason)) }
    static func liveCaptureFailed(interface: String, reason: String) -> Self {
        .init(.liveCaptureFailed(interface: interface, reason: reason))
    }
}
