import NIOCore

/// Builds a ByteBuffer from hex digits; spaces and `|` are ignored, `"text"` segments are taken
/// as UTF-8, so vectors from the wire-format reference can be pasted as written there.
public func hexBuffer(_ text: String) -> ByteBuffer {
    var buffer = ByteBuffer()
    var inQuote = false
    var pending: UInt8?
    for scalar in text.unicodeScalars {
        if scalar == "\"" { inQuote.toggle(); continue }
        if inQuote { buffer.writeString(String(scalar)); continue }
        guard let digit = UInt8(String(scalar), radix: 16) else { continue }
        if let high = pending {
            buffer.writeInteger(high << 4 | digit)
            pending = nil
        } else {
            pending = digit
        }
    }
    precondition(pending == nil, "odd number of hex digits")
    return buffer
}

/// Lowercase hex of a buffer's readable bytes.
public func hexString(_ buffer: ByteBuffer) -> String {
    buffer.readableBytesView.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}

extension ByteBuffer {
    /// A buffer holding `string` as UTF-8.
    public init(text: String) {
        self.init()
        writeString(text)
    }
}
