/// Reads the PROXY protocol header that starts a connection from a load balancer, version 1
/// (text) or version 2 (binary), from bytes as they arrive, however they are cut
/// (`doc/proxy-protocol.txt`). A pure state machine: no I/O, no clock; the NIO handler that
/// feeds it lives in the relay.
///
/// Use: ``parse(_:)`` each read until it returns ``Step/header(_:consumed:)``; the bytes of
/// that read past `consumed` are the connection's own (the HTTP request, a TLS ClientHello).
/// A thrown ``ProxyProtocolError`` ends the connection; the parser is then of no further use.
///
/// Checks, each as soon as the bytes it needs are in, so a wrong connection is refused at its
/// first wrong byte: the start must be version 1's `PROXY ` or version 2's 12-byte signature
/// (the protocol forbids guessing, §2); version 2's version nibble must be 2, its command LOCAL
/// or PROXY, its family and protocol ones the protocol defines, its length within
/// ``ProxyProtocolLimits/maxVersion2HeaderBytes``; a version 1 line must end in CRLF within 107
/// bytes (a lone CR or LF is refused) and read exactly as §2.1 writes it. TLVs after a version 2
/// address block are skipped unread (§2.2 lets a receiver ignore them).
///
/// Holds at most the header: 107 bytes for version 1, the limit for version 2.
public struct ProxyHeaderParser: Sendable {
    public enum Step: Sendable, Hashable {
        /// The header is not complete yet: feed the next read.
        case needMore
        /// The header ended inside this read, after its first `consumed` bytes.
        case header(ProxyHeader, consumed: Int)
    }

    private enum State: Sendable {
        /// Matching the first bytes against both versions' starts.
        case start
        case version1
        case version2
    }

    public let limits: ProxyProtocolLimits
    private var state = State.start
    /// The header's bytes received so far.
    private var received: [UInt8] = []

    /// `PROXY ` (§2.1).
    static let version1Start: [UInt8] = Array("PROXY ".utf8)
    /// `\r\n\r\n\0\r\nQUIT\n` (§2.2).
    static let version2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    public init(limits: ProxyProtocolLimits = ProxyProtocolLimits()) {
        self.limits = limits
        received.reserveCapacity(ProxyProtocolLimits.version1MaximumLineBytes)
    }

    /// Bytes of a header begun but not complete: what a connection that closes now left unsaid.
    public var bytesHeld: Int { received.count }

    /// Feeds the next bytes of the connection.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(ProxyProtocolError) -> Step {
        var index = bytes.startIndex
        var offset = 0
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            offset += 1
            received.append(byte)
            switch state {
            case .start:
                try matchStart(rest: bytes[index...])
            case .version1:
                if let header = try version1Byte(byte) { return .header(header, consumed: offset) }
            case .version2:
                if let header = try version2Byte() { return .header(header, consumed: offset) }
            }
        }
        return .needMore
    }

    /// After a byte of the start: still a prefix of one version's start, that start complete, or
    /// neither (refused with what the connection began with, this read's rest included).
    private mutating func matchStart(rest: some Collection<UInt8>) throws(ProxyProtocolError) {
        let count = received.count
        if received[0] == Self.version1Start[0] {
            guard received[count - 1] == Self.version1Start[count - 1] else {
                // `PROXY` then anything but one space is the protocol's, broken; before that, no header.
                if count == Self.version1Start.count { throw .malformed("\"PROXY\" not followed by one space") }
                throw .notProxyHeader(received + rest.prefix(16))
            }
            if count == Self.version1Start.count { state = .version1 }
        } else {
            guard received[count - 1] == Self.version2Signature[count - 1] else {
                throw .notProxyHeader(received + rest.prefix(16))
            }
            if count == Self.version2Signature.count { state = .version2 }
        }
    }

    /// A byte of a version 1 line: the header once it ends the line.
    private mutating func version1Byte(_ byte: UInt8) throws(ProxyProtocolError) -> ProxyHeader? {
        let count = received.count
        let carriageReturn: UInt8 = 0x0D, lineFeed: UInt8 = 0x0A
        if count >= 2, received[count - 2] == carriageReturn {
            guard byte == lineFeed else { throw .malformed("a CR not followed by LF") }
            return try Self.version1Header(line: received[..<(count - 2)])
        }
        if byte == lineFeed { throw .malformed("a line ended by LF without CR") }
        if count >= ProxyProtocolLimits.version1MaximumLineBytes { throw .lineTooLong() }
        return nil
    }

    /// A byte of a version 2 header: checks each fixed field as it completes, and the header
    /// once its length is in.
    private mutating func version2Byte() throws(ProxyProtocolError) -> ProxyHeader? {
        let count = received.count
        let fixed = ProxyProtocolLimits.version2FixedBytes
        switch count {
        case 13:
            try Self.checkVersionAndCommand(received[12])
        case 14:
            try Self.checkFamily(received[13])
        case fixed:
            let total = fixed + Self.addressLength(received)
            if total > limits.maxVersion2HeaderBytes { throw .headerTooLong(total, limit: limits.maxVersion2HeaderBytes) }
        default:
            break
        }
        guard count >= fixed, count == fixed + Self.addressLength(received) else { return nil }
        return try Self.version2Header(received)
    }

    /// The length field of a version 2 header whose 16 fixed bytes are in.
    static func addressLength(_ header: [UInt8]) -> Int { Int(header[14]) << 8 | Int(header[15]) }
}
