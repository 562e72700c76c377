import BLIPCore
import BLIPTestSupport
import CZlib
import NIOCore
import Testing

/// ISA-L and zlib decode every direction alike: the same messages, the same running CRC, the
/// same failures (wire-format reference §2.4, §3.2, §3.4, §3.5).
@Suite("Decode libraries: ISA-L against zlib")
struct DecodeLibraryTests {
    /// One direction as a sender would write it: messages cut into frames of random sizes on one
    /// deflater, so back-references reach into earlier frames and earlier messages.
    struct RandomDirection {
        var frames: [ByteBuffer] = []
        var sent: [BLIPMessage] = []

        init(seed: UInt64, messages: Int, level: Int32) throws {
            var random = SeededRandom(seed: seed)
            let codec = OutboundCodec(compressionLevel: level)
            // A few bodies come back, whole or in part: the history spans messages.
            var earlier: [[UInt8]] = []
            for index in 0..<messages {
                let size = [0, 1, 57, 300, 4_000, 16_380, 40_000, 70_000][Int(random.next() % 8)]
                var body: [UInt8]
                if let old = earlier.randomElement(using: &random), random.next() % 3 == 0 {
                    body = Array(old.prefix(size)) + random.bytes(max(0, size - old.count), compressible: true)
                } else {
                    body = random.bytes(size, compressible: random.next() % 4 != 0)
                }
                earlier.append(body)
                var properties = Properties()
                properties["Profile"] = random.next() % 2 == 0 ? "rev" : "changes"
                properties["id"] = "doc-\(index)"
                let message = BLIPMessage.request(profile: "rev", properties: properties, body: ByteBuffer(bytes: body),
                                                  compressed: random.next() % 5 != 0, noReply: true)
                sent.append(message)
                var stream = message.encodedStream()
                repeat {
                    // Cuts anywhere, including inside the properties and one-byte frames.
                    let cut = random.next() % 4 == 0 ? Int(random.next() % 8) + 1 : Int(random.next() % 20_000) + 1
                    let chunk = stream.readSlice(length: min(cut, stream.readableBytes))!
                    var frame = ByteBuffer()
                    try codec.encodeFrame(number: MessageNumber(index + 1),
                                          flags: FrameFlags(type: .request, compressed: message.isCompressed, noReply: true,
                                                            moreComing: stream.readableBytes > 0),
                                          chunk: chunk, into: &frame)
                    frames.append(frame)
                } while stream.readableBytes > 0
            }
        }
    }

    /// Decodes `frames` with one library: the messages, the running CRC after each frame, and the
    /// error that stopped the direction, if any.
    static func decode(_ frames: [ByteBuffer], with library: DecodeLibrary, limits: BLIPLimits = .default)
        -> (messages: [BLIPMessage], checksums: [UInt32], error: BLIPError?) {
        let decoder = DirectionDecoder(limits: limits, library: library)
        var messages: [BLIPMessage] = []
        var checksums: [UInt32] = []
        for frame in frames {
            do {
                if let message = try decoder.receive(frame).message { messages.append(message) }
                checksums.append(decoder.checksum)
            } catch {
                return (messages, checksums, error)
            }
        }
        return (messages, checksums, nil)
    }

    @Test("ISA-L's crc32_gzip_refl equals zlib's crc32 from any starting value, on any length",
          arguments: [1, 2, 3] as [UInt64])
    func crcEqualsZlib(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<200 {
            let bytes = random.bytes(Int(random.next() % 5_000))
            let start = UInt32(truncatingIfNeeded: random.next())
            bytes.withUnsafeBytes { raw in
                #expect(CRC32.update(start, raw, using: .isal) == CRC32.update(start, raw, using: .zlib))
            }
        }
        // The crouton frame's payload (wire-format reference §8.1): 60 31 fe 1e with either library.
        let payload: [UInt8] = [0x17] + Array("Shoe-Size\u{0}8.5\u{0}Hair\u{0}yes\u{0}Hi!".utf8)
        for library in DecodeLibrary.allCases {
            #expect(payload.withUnsafeBytes { CRC32.update(0, $0, using: library) } == 0x6031_FE1E)
        }
    }

    @Test("random directions (JSON-like and binary bodies, random cuts, history across messages) decode alike",
          arguments: [(1, 6), (2, 6), (3, 1), (4, 9), (5, 0), (6, 6)] as [(UInt64, Int32)])
    func randomDirectionsDecodeAlike(seed: UInt64, level: Int32) throws {
        let direction = try RandomDirection(seed: seed, messages: 40, level: level)
        let zlib = Self.decode(direction.frames, with: .zlib)
        #expect(zlib.error == nil)
        // The default switches between zlib and ISA-L as frame sizes change, carrying the window.
        for library in [DecodeLibrary.isal, .isalOnly] {
            let isal = Self.decode(direction.frames, with: library)
            #expect(isal.error == nil, "\(library)")
            #expect(isal.checksums == zlib.checksums)
            #expect(isal.messages.count == direction.sent.count && zlib.messages.count == direction.sent.count)
            for (index, (one, two)) in zip(isal.messages, zlib.messages).enumerated() {
                #expect(one.properties == two.properties && one.body == two.body)
                #expect(one.body == direction.sent[index].body, "\(library): message \(index + 1)")
            }
        }
    }

    @Test("a codec copied between frames goes on from the same history: original and copy decode the rest alike, with each library",
          arguments: DecodeLibrary.allCases)
    func copiedCodecGoesOnAlike(library: DecodeLibrary) throws {
        let direction = try RandomDirection(seed: 31, messages: 24, level: 6)
        let frames = try direction.frames.map { frame throws(BLIPError) in try BLIPFrame.parse(frame) }
        func payloads(_ codec: InboundCodec, _ slice: ArraySlice<BLIPFrame>) throws -> [[UInt8]] {
            try slice.map { frame in Array(buffer: try codec.decode(frame)) }
        }
        let reference = try payloads(InboundCodec(library: .zlib), frames[...])
        // Splits after small and after large frames, so the adaptive inflater forks in either library.
        for split in [1, frames.count / 3, frames.count / 2, frames.count - 2] {
            let original = InboundCodec(library: library)
            let head = try payloads(original, frames[..<split])
            let copy = try InboundCodec(copying: original)
            #expect(try payloads(copy, frames[split...]) == Array(reference[split...]), "copy after frame \(split)")
            #expect(try payloads(original, frames[split...]) == Array(reference[split...]), "original after frame \(split)")
            #expect(head == Array(reference[..<split]))
        }
    }

    @Test("damaged compressed frames: both libraries fail, or both decode the same bytes", arguments: [21, 22, 23] as [UInt64])
    func damagedFramesFailAlike(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let direction = try RandomDirection(seed: seed, messages: 12, level: 6)
        var failures = 0
        for _ in 0..<60 {
            var frames = direction.frames
            let index = Int(random.next() % UInt64(frames.count))
            var frame = frames[index]
            guard frame.readableBytes > 7 else { continue }
            // Damage the payload only (after the two header bytes, before the checksum).
            let at = frame.readerIndex + 2 + Int(random.next() % UInt64(frame.readableBytes - 6))
            frame.setInteger(frame.getInteger(at: at, as: UInt8.self)! ^ UInt8(1 << (random.next() % 8)), at: at)
            frames[index] = frame
            let zlib = Self.decode(frames, with: .zlib)
            for library in [DecodeLibrary.isal, .isalOnly] {
                let isal = Self.decode(frames, with: library)
                #expect((isal.error == nil) == (zlib.error == nil))
                #expect(isal.checksums == zlib.checksums)
                #expect(isal.messages.map(\.body) == zlib.messages.map(\.body))
            }
            if zlib.error != nil { failures += 1 }
        }
        #expect(failures > 0)
    }

    @Test("a decompression bomb stops at the frame limit and at the message limit with either library",
          arguments: DecodeLibrary.allCases)
    func bombsStop(library: DecodeLibrary) throws {
        var limits = BLIPLimits()
        limits.maxInflatedFrameSize = 64 * 1024
        let sender = AssemblyTests.Sender()
        let zeros = ByteBuffer(repeating: 0, count: 1_000_000)
        let frame = try sender.frame(1, .request, zeros, compressed: true)
        #expect(frame.readableBytes < 2_000)
        #expect { try DirectionDecoder(limits: limits, library: library).receive(frame) }
            throws: { ($0 as? BLIPError)?.code == .inflatedFrameTooLarge }

        limits = BLIPLimits()
        limits.maxMessageSize = 100_000
        let chunked = AssemblyTests.Sender()
        let decoder = DirectionDecoder(limits: limits, library: library)
        _ = try decoder.receive(chunked.frame(1, .request, ByteBuffer(repeating: 0, count: 60_000), compressed: true, more: true))
        #expect { try decoder.receive(chunked.frame(1, .request, ByteBuffer(repeating: 0, count: 60_000), compressed: true)) }
            throws: { ($0 as? BLIPError)?.code == .messageTooLarge }
    }

    @Test("a frame inflated under a small limit makes its output reserve no more than the limit allows, with either library",
          arguments: DecodeLibrary.allCases)
    func outputRoomStaysWithinTheLimit(library: DecodeLibrary) throws {
        let sender = AssemblyTests.Sender()
        let body = ByteBuffer(string: String(repeating: "{\"_id\":\"doc\"}", count: 20))   // 260 bytes
        let frame = try BLIPFrame.parse(sender.frame(1, .request, body, compressed: true))
        let codec = InboundCodec(library: library)
        var output = ByteBuffer()
        let count = try codec.decode(frame, appendingTo: &output, limit: 400)
        #expect(count == body.readableBytes && output == body)
        // limit + 1 = 401 bytes asked for at most, rounded up to a power of two by the allocator.
        #expect(output.capacity <= 512, "capacity \(output.capacity)")
    }

    @Test("a final block followed by a new stream in the same frame: both libraries restart at the next byte",
          arguments: DecodeLibrary.allCases)
    func newStreamAfterFinalBlock(library: DecodeLibrary) throws {
        // Stream A ends with a final block (Z_FINISH); stream B starts in the same payload and
        // goes on in the next frame, whose back-references reach into B's first part.
        let first = Array("{\"_id\":\"doc-1\",\"type\":\"order\"}".utf8)
        let second = Array("{\"_id\":\"doc-2\",\"type\":\"order\"}{\"_id\":\"doc-2\"}".utf8)
        let third = Array("{\"_id\":\"doc-2\",\"type\":\"order\"} again".utf8)
        let a = Self.rawDeflate([[0] + first], flush: Z_FINISH)[0]   // 0: no properties
        let b = Self.rawDeflate([second, third], flush: Z_SYNC_FLUSH)
        let chunks: [[UInt8]] = [[0] + first + second, third]
        let payloads: [[UInt8]] = [a + b[0], b[1]]
        var running = RunningChecksum()
        var frames: [ByteBuffer] = []
        for (index, payload) in payloads.enumerated() {
            running.update(ByteBuffer(bytes: chunks[index]), using: .zlib)
            // MSG, Compressed, NoReply; MoreComing on the first.
            var frame = ByteBuffer(bytes: [0x01, index == 0 ? 0x68 : 0x28])
            frame.writeBytes(payload)
            frame.writeInteger(running.value, endianness: .big)
            frames.append(frame)
        }
        let decoded = Self.decode(frames, with: library)
        #expect(decoded.error == nil)
        #expect(decoded.messages.first.map { Array($0.body.readableBytesView) } == first + second + third)
    }

    /// Raw deflate (window 2^15, level 6) of `pieces`, each ended by `flush`; a sync flush's
    /// `00 00 FF FF` is stripped as BLIP senders do. One array per piece.
    static func rawDeflate(_ pieces: [[UInt8]], flush: Int32) -> [[UInt8]] {
        var stream = z_stream()
        _ = czlib_deflateInit2(&stream, 6, -15, 9, Z_DEFAULT_STRATEGY)
        defer { deflateEnd(&stream) }
        return pieces.map { piece in
            var input = piece
            var output = [UInt8](repeating: 0, count: piece.count + 128)
            let produced = input.withUnsafeMutableBufferPointer { inBuffer in
                output.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_in = inBuffer.baseAddress
                    stream.avail_in = uInt(inBuffer.count)
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    _ = deflate(&stream, flush)
                    return outBuffer.count - Int(stream.avail_out)
                }
            }
            let bytes = Array(output.prefix(produced))
            return flush == Z_SYNC_FLUSH ? Array(bytes.dropLast(4)) : bytes
        }
    }
}
