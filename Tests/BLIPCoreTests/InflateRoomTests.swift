import NIOCore
import Testing
@testable import BLIPCore

/// How much output room zlib's first call for a frame asks for: small messages get small
/// buffers, a run of like frames asks for a little more than the one before, and a frame that
/// needs more than it asked for still comes out whole.
@Suite("Inflate room: small buffers for small messages")
struct InflateRoomTests {
    @Test("a 300-byte message deflated to about 250 asks for under 1 KiB, with room for zlib's fast loop to the end")
    func smallMessage() {
        #expect(ZlibInflater.firstRoom(compressed: 250, lastOutput: 300) == 500 + 258)
        #expect(ZlibInflater.firstRoom(compressed: 250, lastOutput: 0) == 500 + 258)
        #expect(ZlibInflater.firstRoom(compressed: 10, lastOutput: 0) == ZlibInflater.minimumRoom)
        #expect(ZlibInflater.firstRoom(compressed: 250, lastOutput: 300) < 1024, "a block the allocator's per-thread cache serves")
    }

    @Test("frames in a run of like sizes ask for a quarter more than the last one inflated to, up to the most any call asks for")
    func runOfLikeFrames() {
        #expect(ZlibInflater.firstRoom(compressed: 1_300, lastOutput: 16_384) == 20_480 + 258)
        #expect(ZlibInflater.firstRoom(compressed: 1_000_000, lastOutput: 0) == rawInflateMaxOutputRoom)
        #expect(ZlibInflater.firstRoom(compressed: 10, lastOutput: 1 << 30) == rawInflateMaxOutputRoom)
    }

    @Test("a highly compressible frame after small ones fills its first room and still inflates whole, then sizes the next")
    func frameLargerThanItsRoom() throws {
        let codec = OutboundCodec(compressionLevel: 6)
        let inflater = try ZlibInflater()
        let bodies: [[UInt8]] = [Array("small".utf8), Array(repeating: 0x41, count: 60_000), Array(repeating: 0x42, count: 60_000)]
        for (index, body) in bodies.enumerated() {
            var frame = ByteBuffer()
            try codec.encodeFrame(number: MessageNumber(index + 1), flags: FrameFlags(type: .request, compressed: true, noReply: true),
                                  chunk: ByteBuffer(bytes: body), into: &frame)
            let parsed = try BLIPFrame.parse(frame)
            var output = ByteBuffer()
            let produced = try inflater.inflateFrame(parsed.payload, into: &output, limit: 1 << 20)
            #expect(produced == body.count)
            #expect(Array(output.readableBytesView) == body)
        }
    }
}
