import NIOCore

/// Reads a fuzz input as a script: small integers, choices and byte runs taken from the front,
/// every read total (past the end it yields zeros and empty runs), so any byte string is a valid
/// script and the fuzzer's mutations move through its choices.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var remaining: Int { bytes.count - position }
    public var isAtEnd: Bool { position >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A little-endian 16-bit value.
    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    public mutating func uint32() -> UInt32 { UInt32(uint16()) | UInt32(uint16()) << 16 }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A value in `0..<count` (0 when `count` is 0).
    public mutating func choose(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        return Int(uint16()) % count
    }

    /// Up to `count` bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return Array(bytes[position..<end])
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] { take(remaining) }

    /// A record `len16 || bytes` (the length clamped to what is left).
    public mutating func record() -> [UInt8] { take(Int(uint16())) }
}

extension ByteBuffer {
    public init(fuzzBytes bytes: some Collection<UInt8>) {
        self = ByteBufferAllocator().buffer(capacity: bytes.count)
        writeBytes(bytes)
    }
}

/// Splits `bytes` into pieces whose sizes the script picks (1…`maxPiece` each), as a network
/// would: for checking that a streaming parser gives the same result however its input is cut.
public func pieces(of bytes: [UInt8], cuts: inout FuzzInput, maxPiece: Int = 4096) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    while start < bytes.count {
        let size = cuts.isAtEnd ? bytes.count - start : 1 + Int(cuts.uint16()) % maxPiece
        let end = min(bytes.count, start + size)
        result.append(Array(bytes[start..<end]))
        start = end
    }
    return result
}

/// Stops the fuzzer with a message: a property the target checks does not hold.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("fuzz check failed: \(message())", file: file, line: line) }
}
