extension ProxyHeaderParser {
    /// A version 1 line without its CRLF: `PROXY TCP4|TCP6 SRC DST SPORT DPORT`, or `PROXY
    /// UNKNOWN` and anything up to the CRLF (`doc/proxy-protocol.txt` §2.1). Fields are
    /// separated by exactly one space; addresses and ports are canonical (no leading zeros).
    static func version1Header(line: ArraySlice<UInt8>) throws(ProxyProtocolError) -> ProxyHeader {
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // fields[0] is "PROXY", matched before.
        guard fields.count >= 2 else { throw .malformed("no protocol after \"PROXY\"") }
        let family = fields[1]
        // "the receiver must ignore anything presented before the CRLF" after UNKNOWN.
        if family == "UNKNOWN" { return .unspecified }
        guard family == "TCP4" || family == "TCP6" else {
            throw .malformed("protocol \(quoted(family)), not TCP4, TCP6 or UNKNOWN")
        }
        guard fields.count == 6 else {
            throw .malformed("\(fields.count - 2) fields after \(family), not 4 (source, destination, their ports)")
        }
        let parseAddress = family == "TCP4" ? ipv4 : ipv6
        guard let source = parseAddress(fields[2]) else { throw .malformed("\(quoted(fields[2])) is no \(family) source address") }
        guard let destination = parseAddress(fields[3]) else { throw .malformed("\(quoted(fields[3])) is no \(family) destination address") }
        guard let sourcePort = port(fields[4]) else { throw .malformed("\(quoted(fields[4])) is no source port") }
        guard let destinationPort = port(fields[5]) else { throw .malformed("\(quoted(fields[5])) is no destination port") }
        return .proxied(source: ProxyEndpoint(address: source, port: sourcePort),
                        destination: ProxyEndpoint(address: destination, port: destinationPort))
    }

    /// A field for an error message: printable ASCII, at most 40 characters.
    private static func quoted(_ field: String) -> String {
        let shown = field.unicodeScalars.prefix(40).map { (0x20...0x7E).contains($0.value) ? String($0) : "?" }.joined()
        return "\"\(shown)\(field.unicodeScalars.count > 40 ? "…" : "")\""
    }

    /// A decimal in 0...65535 without leading zeros (§2.1).
    static func port(_ text: String) -> UInt16? {
        guard let value = canonicalDecimal(text), value <= 65535 else { return nil }
        return UInt16(value)
    }

    /// Exactly four decimals in 0...255 without leading zeros, separated by single dots (§2.1).
    static func ipv4(_ text: String) -> ProxyAddress? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = canonicalDecimal(part), byte <= 255 else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return .ipv4(value)
    }

    /// Groups of one to four hex digits separated by colons, with at most one `::` standing for
    /// the zero groups it replaces, 128 bits in all (§2.1). A last part in dotted-quad form is
    /// taken for the low 32 bits (RFC 4291 §2.2), as `inet_ntop` writes IPv4-mapped addresses.
    static func ipv6(_ text: String) -> ProxyAddress? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        let halves = splitAtDoubleColons(text)
        guard halves.count <= 2 else { return nil }
        guard var head = groups(halves[0], last: halves.count == 1) else { return nil }
        var groupCount = head.count
        var tail: [UInt16] = []
        if halves.count == 2 {
            guard let parsed = groups(halves[1], last: true) else { return nil }
            tail = parsed
            groupCount += tail.count
            guard groupCount <= 7 else { return nil }  // `::` stands for one zero group at least
            head += Array(repeating: 0, count: 8 - groupCount) + tail
        } else {
            guard groupCount == 8 else { return nil }
        }
        var bytes: [UInt8] = []
        for group in head { bytes += [UInt8(group >> 8), UInt8(group & 0xFF)] }
        return ProxyAddress(bytes: bytes)
    }

    /// `text` cut at each `::`.
    private static func splitAtDoubleColons(_ text: String) -> [String] {
        var parts: [String] = []
        var current: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        var pending: UInt8?
        while let byte = pending ?? bytes.next() {
            pending = nil
            if byte == 0x3A, let next = bytes.next() {
                if next == 0x3A {
                    parts.append(String(decoding: current, as: UTF8.self))
                    current = []
                    continue
                }
                current.append(byte)
                pending = next
                continue
            }
            current.append(byte)
        }
        parts.append(String(decoding: current, as: UTF8.self))
        return parts
    }

    /// The 16-bit groups of one side of `::` ("" for none); `last`: the side that ends the address,
    /// whose last part may be a dotted quad (two groups).
    private static func groups(_ text: String, last: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if last, index == parts.count - 1, part.contains(".") {
                guard case .ipv4(let value)? = ipv4(String(part)) else { return nil }
                groups += [UInt16(value >> 16), UInt16(value & 0xFFFF)]
                continue
            }
            guard (1...4).contains(part.utf8.count), part.utf8.allSatisfy(\.isHexDigit),
                  let group = UInt16(part, radix: 16) else { return nil }
            groups.append(group)
        }
        return groups
    }

    /// A run of ASCII digits without a leading zero (but "0" itself), as a number; nil otherwise
    /// (or past five digits, more than any field here holds).
    private static func canonicalDecimal(_ text: some StringProtocol) -> Int? {
        let digits = Array(text.utf8)
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
              digits.count == 1 || digits[0] != 0x30 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool { (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
