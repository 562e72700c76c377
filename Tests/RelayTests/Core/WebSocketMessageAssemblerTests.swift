import NIOCore
import Testing
import WebSocketWire
@testable import Relay

/// A client's masked messages, put back together for the decoder: each comes out unmasked, and
/// on a run of small ones the buffer they are unmasked into is reused, but never while the last
/// message's bytes are still held (a decoded body, a capture's copy).
@Suite("WebSocket message assembler")
struct WebSocketMessageAssemblerTests {
    static let key = WebSocketMaskingKey(0x5A, 0x01, 0xC3, 0x7E)

    static func masked(_ plain: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: plain.enumerated().map { $0.element ^ key[$0.offset] })
    }

    static func header(_ length: Int, opcode: UInt8 = WebSocketFrameHeader.binary, fin: Bool = true) -> WebSocketFrameHeader {
        WebSocketFrameHeader(fin: fin, opcode: opcode, maskingKey: key, payloadLength: UInt64(length), headerLength: 6)
    }

    static func message(_ seed: UInt8, count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) } }

    static func storageAddress(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func aRunOfSmallMessagesIsUnmaskedIntoOneKeptBuffer() throws {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << 20, keptBufferCapacity: 4096, allocator: ByteBufferAllocator())
        let first = Self.message(1, count: 300)
        var address: UnsafeRawPointer?
        do {
            let (unmasked, tooLarge) = assembler.add(Self.header(300), payload: Self.masked(first))
            #expect(!tooLarge)
            #expect(Array(try #require(unmasked).readableBytesView) == first)
            address = Self.storageAddress(unmasked!)
        }
        #expect(assembler.keptCapacity >= 300)
        // The first message's bytes are gone: the second is unmasked into the same memory.
        let second = Self.message(2, count: 280)
        let (unmasked, _) = assembler.add(Self.header(280), payload: Self.masked(second))
        #expect(Array(try #require(unmasked).readableBytesView) == second)
        #expect(Self.storageAddress(unmasked!) == address)
    }

    @Test func aMessageStillHeldIsNeverWrittenOver() throws {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << 20, keptBufferCapacity: 4096, allocator: ByteBufferAllocator())
        let first = Self.message(3, count: 200)
        let held = try #require(assembler.add(Self.header(200), payload: Self.masked(first)).message)
        let body = held.getSlice(at: 10, length: 50)!  // as a decoded body holds it
        let second = Self.message(4, count: 200)
        let next = try #require(assembler.add(Self.header(200), payload: Self.masked(second)).message)
        #expect(Array(next.readableBytesView) == second)
        #expect(Array(held.readableBytesView) == first)
        #expect(Array(body.readableBytesView) == Array(first[10..<60]))
        #expect(Self.storageAddress(next) != Self.storageAddress(held))
    }

    @Test func aMessagePastTheLimitIsUnmaskedIntoItsOwnBufferAndNotKept() throws {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << 20, keptBufferCapacity: 4096, allocator: ByteBufferAllocator())
        _ = assembler.add(Self.header(100), payload: Self.masked(Self.message(5, count: 100)))
        let kept = assembler.keptCapacity
        #expect(kept >= 100 && kept <= 4096)
        let large = Self.message(6, count: 20_000)
        let unmasked = try #require(assembler.add(Self.header(20_000), payload: Self.masked(large)).message)
        #expect(Array(unmasked.readableBytesView) == large)
        #expect(assembler.keptCapacity == kept)
        // And with no room allowed, nothing is ever kept.
        var keepsNothing = WebSocketMessageAssembler(maxMessageSize: 1 << 20, allocator: ByteBufferAllocator())
        let small = Self.message(7, count: 64)
        #expect(Array(try #require(keepsNothing.add(Self.header(64), payload: Self.masked(small)).message).readableBytesView) == small)
        #expect(keepsNothing.keptCapacity == 0)
    }

    @Test func aFragmentedMessageBetweenSmallOnesComesOutWhole() throws {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << 20, keptBufferCapacity: 4096, allocator: ByteBufferAllocator())
        let before = Self.message(8, count: 120)
        #expect(Array(try #require(assembler.add(Self.header(120), payload: Self.masked(before)).message).readableBytesView) == before)
        let whole = Self.message(9, count: 90)
        #expect(assembler.add(Self.header(40, fin: false), payload: Self.masked(Array(whole[..<40]))).message == nil)
        // Each fragment is masked from its own first byte (RFC 6455 §5.3: the key restarts per frame).
        let last = try #require(assembler.add(Self.header(50, opcode: WebSocketFrameHeader.continuation),
                                              payload: Self.masked(Array(whole[40...]))).message)
        #expect(Array(last.readableBytesView) == whole)
        let after = Self.message(10, count: 130)
        #expect(Array(try #require(assembler.add(Self.header(130), payload: Self.masked(after)).message).readableBytesView) == after)
    }
}
