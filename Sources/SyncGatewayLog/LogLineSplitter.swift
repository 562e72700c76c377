/// Cuts bytes read from a growing log into whole lines: what ends without a newline waits for
/// the rest. Bounded: a line longer than ``maxLineBytes`` is cut there (its rest skipped up to
/// its newline), so a log without newlines holds at most that much.
public struct LogLineSplitter: Sendable {
    public let maxLineBytes: Int
    private var partial: [UInt8] = []
    /// True while the rest of an over-long line is being skipped.
    private var skipping = false

    public init(maxLineBytes: Int) { self.maxLineBytes = max(1, maxLineBytes) }

    /// The lines `bytes` completes, without their newlines (and `\r`).
    public mutating func lines(_ bytes: some Collection<UInt8>) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if !skipping { lines.append(Self.text(partial)) }
                partial.removeAll(keepingCapacity: true)
                skipping = false
            } else if skipping {
                continue
            } else if partial.count == maxLineBytes {
                lines.append(Self.text(partial))
                partial.removeAll(keepingCapacity: true)
                skipping = true
            } else {
                partial.append(byte)
            }
        }
        return lines
    }

    /// Forgets a line begun (the file was replaced or cut).
    public mutating func reset() {
        partial.removeAll()
        skipping = false
    }

    private static func text(_ bytes: [UInt8]) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        return text
    }
}
