import WebSocketWire

extension WebSocketFrameError {
    /// The relay's error for framing it cannot pass on: 1009 for a frame over the size limit,
    /// 1002 for the others (RFC 6455 §7.4.1). The two control-frame cases keep the wording NIO's
    /// frame decoder gave them (the relay used that decoder before), so close reasons and logs
    /// read as before.
    var relayError: RelayError {
        switch self {
        case .frameTooLarge: return RelayError(.frameTooLarge)
        case .reservedBits(let bits):
            return RelayError(.webSocketProtocol("reserved bits 0x\(String(bits, radix: 16)) set, no extension negotiated"))
        case .reservedOpcode(let opcode): return RelayError(.webSocketProtocol("reserved opcode 0x\(String(opcode, radix: 16))"))
        case .fragmentedControlFrame: return RelayError(.webSocketProtocol("fragmentedControlFrame"))
        case .multiByteControlFrameLength: return RelayError(.webSocketProtocol("multiByteControlFrameLength"))
        case .unmaskedClientFrame: return RelayError(.webSocketProtocol("unmasked frame from the client (RFC 6455 §5.1)"))
        }
    }
}
