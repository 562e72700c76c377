import NIOCore
import Testing
import WebSocketWire

/// The frame scanner (RFC 6455 §5.2): whatever way the bytes are cut into reads, it finds
/// the same frames with the same headers and byte ranges, holds only the incomplete tail, and
/// refuses framing a relay cannot pass on, each with its own error.
@Suite struct WebSocketFrameScannerTests {
    /// A frame as a peer would send it: FIN, opcode, optional mask key (the payload is then
    /// masked), the length in its shortest form, or in `lengthForm` (2, 4 or 10 header bytes).
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8]? = nil,
                      lengthForm: Int? = nil, firstByteExtra: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | firstByteExtra | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let form = lengthForm ?? (payload.count < 126 ? 2 : payload.count <= 0xFFFF ? 4 : 10)
        switch form {
        case 2: bytes.append(maskBit | UInt8(payload.count))
        case 4: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes.append(maskBit | 127); bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// What a scan of `reads` found: each frame's header and its bytes, and the bytes left over.
    struct Found: Equatable {
        var headers: [WebSocketFrameHeader] = []
        var frames: [[UInt8]] = []
        var pending = 0
    }

    static func scan(_ reads: [[UInt8]], maxFrameSize: Int = 1 << 20) throws(WebSocketFrameError) -> Found {
        var scanner = WebSocketFrameScanner(maxFrameSize: maxFrameSize)
        var found = Found()
        for read in reads {
            scanner.append(ByteBuffer(bytes: read))
            while let frame = try scanner.next() {
                found.headers.append(frame.header)
                found.frames.append(Array(scanner.bytes(from: frame.start, to: frame.end).readableBytesView))
            }
        }
        found.pending = scanner.pendingBytes
        return found
    }

    static let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
    static let stream: [[UInt8]] = [
        frame(0x2, Array("hello".utf8), mask: key),
        frame(0x9, Array("ping".utf8)),
        frame(0x2, [UInt8](repeating: 7, count: 300), fin: false, mask: key),  // 16-bit length
        frame(0x0, [UInt8](repeating: 9, count: 70_000)),                       // 64-bit length
        frame(0x1, []),
        frame(0x8, [0x03, 0xE8]),
    ]

    @Test func findsEachFrameWithItsHeaderAndExactBytes() throws {
        let found = try Self.scan([Self.stream.flatMap { $0 }])
        #expect(found.frames == Self.stream)
        #expect(found.pending == 0)
        #expect(found.headers.map(\.opcode) == [0x2, 0x9, 0x2, 0x0, 0x1, 0x8])
        #expect(found.headers.map(\.fin) == [true, true, false, true, true, true])
        #expect(found.headers.map(\.payloadLength) == [5, 4, 300, 70_000, 0, 2])
        #expect(found.headers.map(\.headerLength) == [6, 2, 8, 10, 2, 2])
        #expect(found.headers[0].maskingKey == WebSocketMaskingKey(Self.key[0], Self.key[1], Self.key[2], Self.key[3]))
        #expect(found.headers[1].maskingKey == nil)
    }

    @Test func theSameFramesWhereverTheBytesAreSplit() throws {
        let small = Self.stream.prefix(3).flatMap { $0 } + Self.stream[4] + Self.stream[5]
        let whole = try Self.scan([small])
        for cut in 0...small.count {
            let split = try Self.scan([Array(small[..<cut]), Array(small[cut...])])
            #expect(split == whole, "split at \(cut)")
        }
    }

    @Test func aFrameArrivingOneByteAtATimeIsReturnedOnceComplete() throws {
        var scanner = WebSocketFrameScanner(maxFrameSize: 1 << 20)
        let bytes = Self.frame(0x2, [UInt8](repeating: 1, count: 70_000), mask: Self.key)
        var frames = 0
        for (index, byte) in bytes.enumerated() {
            scanner.append(ByteBuffer(bytes: [byte]))
            while let frame = try scanner.next() {
                frames += 1
                #expect(index == bytes.count - 1, "complete only with its last byte")
                #expect(Array(scanner.bytes(from: frame.start, to: frame.end).readableBytesView) == bytes)
                #expect(Array(scanner.payload(of: frame).readableBytesView) == Array(bytes[14...]))
            }
        }
        #expect(frames == 1)
        #expect(scanner.pendingBytes == 0)
    }

    @Test func keepsOnlyTheIncompleteTailBetweenReads() throws {
        var scanner = WebSocketFrameScanner(maxFrameSize: 1 << 20)
        let first = Self.frame(0x2, Array("one".utf8)), second = Self.frame(0x2, Array("two!".utf8))
        scanner.append(ByteBuffer(bytes: first + second.prefix(3)))
        #expect(try scanner.next()?.header.payloadLength == 3)
        #expect(try scanner.next() == nil)
        #expect(scanner.pendingBytes == 3)
        scanner.append(ByteBuffer(bytes: second.dropFirst(3)))
        let frame = try #require(try scanner.next())
        #expect(Array(scanner.bytes(from: frame.start, to: frame.end).readableBytesView) == second)
        #expect(scanner.pendingBytes == 0)
    }

    @Test func lengthsNeedNotBeInTheShortestForm() throws {
        let longForm = Self.frame(0x2, Array("abc".utf8), lengthForm: 10)
        let found = try Self.scan([longForm])
        #expect(found.frames == [longForm], "passed on as received")
        #expect(found.headers.first?.headerLength == 10)
    }

    @Test func aFrameOfExactlyTheMaximumSizeIsAccepted() throws {
        let found = try Self.scan([Self.frame(0x2, [UInt8](repeating: 0, count: 1000))], maxFrameSize: 1000)
        #expect(found.headers.first?.payloadLength == 1000)
    }

    @Test func aLargerFrameIsRefusedFromItsHeaderAlone() {
        let headers: [[UInt8]] = [
            Array(Self.frame(0x2, [UInt8](repeating: 0, count: 1001)).prefix(4)),     // 16-bit length
            Array(Self.frame(0x2, [UInt8](repeating: 0, count: 70_000)).prefix(10)),  // 64-bit length
            [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0],                                  // 2^63 masked: over Int.max
        ]
        for header in headers {
            #expect(throws: WebSocketFrameError.self) { _ = try Self.scan([header], maxFrameSize: 1000) }
        }
        #expect(throws: WebSocketFrameError.frameTooLarge(length: 1001)) {
            _ = try Self.scan([Array(Self.frame(0x2, [UInt8](repeating: 0, count: 1001)).prefix(4))], maxFrameSize: 1000)
        }
    }

    @Test func protocolViolationsAreRefusedFromTheHeader() {
        let cases: [([UInt8], WebSocketFrameError)] = [
            (Self.frame(0x2, [1], firstByteExtra: 0x40), .reservedBits(0x40)),
            (Self.frame(0x2, [1], firstByteExtra: 0x30), .reservedBits(0x30)),
            (Self.frame(0x3, [1]), .reservedOpcode(0x3)),
            (Self.frame(0xB, [1]), .reservedOpcode(0xB)),
            (Self.frame(0x9, [1], fin: false), .fragmentedControlFrame),
            (Self.frame(0x8, [UInt8](repeating: 0, count: 126)), .multiByteControlFrameLength),
        ]
        for (bytes, error) in cases {
            // Refused from the header, after the frames before it.
            var scanner = WebSocketFrameScanner(maxFrameSize: 1 << 20)
            scanner.append(ByteBuffer(bytes: Self.frame(0x2, [0]) + bytes.prefix(4)))
            #expect(throws: Never.self) { _ = try scanner.next() }
            #expect(throws: error) { _ = try scanner.next() }
        }
        // A PING of 125 bytes is fine.
        #expect(throws: Never.self) { _ = try Self.scan([Self.frame(0x9, [UInt8](repeating: 0, count: 125))]) }
    }

    @Test func aClientsUnmaskedFrameIsRefusedWhenMasksAreRequired() throws {
        var scanner = WebSocketFrameScanner(maxFrameSize: 1 << 20, requiresMask: true)
        scanner.append(ByteBuffer(bytes: Self.frame(0x2, [1], mask: Self.key) + Self.frame(0x2, [2])))
        #expect(try scanner.next()?.header.maskingKey != nil)
        #expect(throws: WebSocketFrameError.unmaskedClientFrame) { _ = try scanner.next() }
    }
}
