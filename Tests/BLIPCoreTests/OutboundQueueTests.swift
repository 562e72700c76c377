import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

@Suite("Outbound framing and scheduling (wire-format §4.2, §4.3, §5)")
struct OutboundQueueTests {
    static func body(_ count: Int, seed: UInt64 = 1, compressible: Bool = false) -> ByteBuffer {
        var random = SeededRandom(seed: seed)
        return ByteBuffer(bytes: random.bytes(count, compressible: compressible))
    }

    @Test("frames are at most 16 KiB, header and checksum included, compressed or not")
    func frameSize() throws {
        for compressed in [false, true] {
            let queue = OutboundQueue()
            queue.enqueueRequest(.request(profile: "rev", body: Self.body(100_000), compressed: compressed))
            var sizes: [Int] = []
            while let frame = try queue.nextFrame() { sizes.append(frame.bytes.readableBytes) }
            #expect(sizes.allSatisfy { $0 <= 16 * 1024 })
            #expect(sizes.count == 7)
        }
    }

    @Test("round-robin: one frame of each message in turn")
    func roundRobin() throws {
        let queue = OutboundQueue()
        queue.enqueueRequest(.request(profile: "a", body: Self.body(40_000)))
        queue.enqueueRequest(.request(profile: "b", body: Self.body(40_000)))
        var order: [MessageNumber] = []
        while let frame = try queue.nextFrame() { order.append(frame.number) }
        #expect(order == [1, 2, 1, 2, 1, 2])
    }

    @Test("an urgent message goes right after the head, and frames shrink to 4 KiB while it waits")
    func urgentInsertion() throws {
        let queue = OutboundQueue()
        queue.enqueueRequest(.request(profile: "big1", body: Self.body(60_000)))
        queue.enqueueRequest(.request(profile: "big2", body: Self.body(60_000)))
        #expect(try queue.nextFrame()?.number == 1)   // both have started after two frames
        #expect(try queue.nextFrame()?.number == 2)
        queue.enqueueRequest(.request(profile: "urgent", body: Self.body(30_000), urgent: true))
        // Queue is now [1, 2]; the urgent #3 goes after the head: [1, 3, 2].
        let next = try #require(try queue.nextFrame())
        #expect(next.number == 1)
        #expect(next.bytes.readableBytes <= 4 * 1024)
        #expect(try queue.nextFrame()?.number == 3)
    }

    @Test("a new message never overtakes one that has not sent its first frame")
    func firstFramesStayInOrder() throws {
        let queue = OutboundQueue()
        queue.enqueueRequest(.request(profile: "a", body: Self.body(20_000)))
        queue.enqueueRequest(.request(profile: "b"))
        queue.enqueueRequest(.request(profile: "c"))
        queue.enqueueRequest(.request(profile: "urgent", urgent: true))
        var firsts: [MessageNumber] = []
        while let frame = try queue.nextFrame() {
            if !firsts.contains(frame.number) { firsts.append(frame.number) }
        }
        #expect(firsts == [1, 2, 3, 4])
    }

    @Test("a message pauses at 128,000 unacknowledged bytes and resumes on ACK; others keep flowing")
    func flowControl() throws {
        let pair = EndpointPair()
        pair.client.send(request: .request(profile: "big", body: Self.body(400_000)))
        var sentBeforeAck = 0
        while let frame = try pair.client.nextFrame() {
            sentBeforeAck += frame.bytes.readableBytes
        }
        #expect(sentBeforeAck >= 128_000 && sentBeforeAck < 128_000 + 16 * 1024 + 64)
        #expect(pair.client.outbound.messageCount == 1)
        // Another message still goes while the big one is paused.
        pair.client.send(request: .request(profile: "small", noReply: true))
        #expect(try pair.client.nextFrame()?.number == 2)
        // The receiver ACKs and the big message resumes.
        pair.client.outbound.receivedAck(AckInfo(type: .ackRequest, number: 1, bytes: UInt64(100_000)))
        #expect(try pair.client.nextFrame()?.number == 1)
    }
}
