/// The one error type of BLIPCore.
///
/// Every error says whether it is fatal for the connection (the peers close on it: wire-format
/// reference §3.7, §4.4) or only for the frame that caused it (the frame is ignored and the
/// connection state stays consistent, as go-blip does for a late reply: §4.4).
public struct BLIPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without details. Stable: tests and metrics key on it.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        case truncatedVarint, overlongVarint
        case shortFrame, missingChecksum, badChecksum, malformedAck
        case inflateFailed, inflatedFrameTooLarge, deflateFailed
        case propertiesTooLarge, propertiesNotTerminated, propertiesOddCount, propertiesDuplicateKey
        case propertiesTruncated
        case unknownFrameType
        case requestNumberGap, requestAlreadyFinished, invalidMessageNumber
        case replyWithoutRequest, replyNumberTooHigh
        case messageTooLarge, frameTooLarge, tooMuchInProgress
    }

    public let code: Code
    /// A human sentence with the particulars (numbers, sizes).
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// True when the connection cannot go on in that direction: a real peer closes on it.
    public var isFatal: Bool {
        switch code {
        case .unknownFrameType, .replyWithoutRequest: return false
        default: return true
        }
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
