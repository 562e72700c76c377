import WebSocketWire

extension WebSocketFrameHeader {
    /// What makes this header invalid for a frame from `sender`, if anything (RFC 6455 §5.1–5.5).
    /// Fragmentation state is the parser's concern, not checked here.
    func problem(sentBy sender: WebSocketMessageParser.Sender, allowedReservedBits: UInt8) -> CaptureError.FrameProblem? {
        if reservedBits & ~allowedReservedBits != 0 { return .reservedBitsSet(reservedBits) }
        if !hasDefinedOpcode { return .reservedOpcode(opcode) }
        if payloadLength >> 63 != 0 { return .lengthHighBitSet }
        switch sender {
        case .client where maskingKey == nil: return .unmaskedClientFrame
        case .server where maskingKey != nil: return .maskedServerFrame
        default: break
        }
        if isControl, !fin { return .fragmentedControlFrame }
        if isControl, payloadLength > 125 { return .controlPayloadTooLong(Int(payloadLength)) }
        return nil
    }
}
