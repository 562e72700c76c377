import BLIPCore
import CZlib
import Foundation
import NIOCore

/// `blipscope bench codec`: decodes and encodes the same frames through BLIPCore and through bare
/// zlib inflate/deflate + crc32 calls, and prints frames/s, MB/s and the ratio of the two.
struct CodecBenchmark {
    let megabytes: Int
    let rounds: Int
    var only: String?
    var codecOnly = false

    struct Workload {
        let name: String
        let messageSize: Int
        let compressed: Bool
    }

    static let workloads = [
        Workload(name: "json 16 KiB, compressed", messageSize: 16_000, compressed: true),
        Workload(name: "json 4 KiB, compressed", messageSize: 4_000, compressed: true),
        Workload(name: "300 B, uncompressed", messageSize: 300, compressed: false),
        Workload(name: "4 KiB, uncompressed", messageSize: 4_000, compressed: false),
        Workload(name: "16 KiB, uncompressed", messageSize: 16_000, compressed: false),
    ]

    func run() throws {
        print("BLIP codec benchmark: \(megabytes) MB of message payload per workload, best of \(rounds)")
        print(pad("workload", 26), pad("op", 7), pad("codec frames/s", 15), pad("codec MB/s", 11),
              pad("zlib MB/s", 10), "codec/zlib time")
        for workload in Self.workloads where only.map({ workload.name.contains($0) }) ?? true {
            let data = BenchData(workload: workload, totalBytes: megabytes * 1_000_000)
            let decode = try best { try decodeWithCodec(data) }
            let bareDecode = codecOnly ? .nan : best { bareInflate(data) }
            let encode = try best { try encodeWithCodec(data) }
            let bareEncode = codecOnly ? .nan : best { bareDeflate(data) }
            report(workload, "decode", frames: data.frames.count, bytes: data.payloadBytes, codec: decode, bare: bareDecode)
            report(workload, "encode", frames: data.frames.count, bytes: data.payloadBytes, codec: encode, bare: bareEncode)
        }
    }

    private func best(_ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return times.min()!
    }

    private func report(_ workload: Workload, _ op: String, frames: Int, bytes: Int, codec: Double, bare: Double) {
        print(pad(workload.name, 26), pad(op, 7),
              pad(String(format: "%.0f", Double(frames) / codec), 15),
              pad(String(format: "%.0f", Double(bytes) / codec / 1e6), 11),
              pad(String(format: "%.0f", Double(bytes) / bare / 1e6), 10),
              String(format: "%.2f", codec / bare))
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    // MARK: BLIPCore

    private func decodeWithCodec(_ data: BenchData) throws {
        let decoder = DirectionDecoder()
        var bodyBytes = 0
        for frame in data.frames {
            if let message = try decoder.receive(frame).message { bodyBytes &+= message.body.readableBytes }
        }
        precondition(bodyBytes == data.bodyBytes, "decoded \(bodyBytes) body bytes, expected \(data.bodyBytes)")
    }

    private func encodeWithCodec(_ data: BenchData) throws {
        let queue = OutboundQueue()
        let allocator = ByteBufferAllocator()
        var frames = 0
        for message in data.messages {
            queue.enqueueRequest(message)
            while let frame = try queue.nextFrame(allocator: allocator) {
                frames &+= frame.bytes.readableBytes > 0 ? 1 : 0
            }
        }
        precondition(frames == data.frames.count)
    }

    // MARK: bare zlib + crc32 on the same bytes

    private func bareInflate(_ data: BenchData) {
        var stream = z_stream()
        _ = czlib_inflateInit2(&stream, -15)
        defer { inflateEnd(&stream) }
        var crc: uLong = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        let trailer: [UInt8] = [0, 0, 0xFF, 0xFF]
        var total = 0
        for payload in data.wirePayloads {
            if !data.workload.compressed {
                payload.withUnsafeReadableBytes { crc = crc32(crc, $0.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt($0.count)) }
                total += payload.readableBytes
                continue
            }
            var produced = 0
            output.withUnsafeMutableBytes { out in
                func feed(_ input: UnsafeRawBufferPointer) {
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
                    stream.avail_in = uInt(input.count)
                    stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self) + produced
                    stream.avail_out = uInt(out.count - produced)
                    _ = inflate(&stream, Z_SYNC_FLUSH)
                    produced = out.count - Int(stream.avail_out)
                }
                payload.withUnsafeReadableBytes { feed($0) }
                trailer.withUnsafeBytes { feed($0) }
                crc = crc32(crc, out.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(produced))
            }
            total += produced
        }
        precondition(total == data.payloadBytes, "bare inflate produced \(total), expected \(data.payloadBytes)")
    }

    private func bareDeflate(_ data: BenchData) {
        var stream = z_stream()
        _ = czlib_deflateInit2(&stream, 6, -15, 9, Z_DEFAULT_STRATEGY)
        defer { deflateEnd(&stream) }
        var crc: uLong = 0
        var output = [UInt8](repeating: 0, count: 1 << 20)
        for chunk in data.chunks {
            chunk.withUnsafeReadableBytes { input in
                crc = crc32(crc, input.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(input.count))
                guard data.workload.compressed else { return }
                output.withUnsafeMutableBytes { out in
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
                    stream.avail_in = uInt(input.count)
                    stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(out.count)
                    _ = deflate(&stream, Z_SYNC_FLUSH)
                }
            }
        }
    }
}

/// The messages of one workload and their frames, produced once by BLIPCore's encoder.
struct BenchData {
    let workload: CodecBenchmark.Workload
    var messages: [BLIPMessage] = []
    var frames: [ByteBuffer] = []
    /// Each frame's payload as sent, and the uncompressed chunk it carries.
    var wirePayloads: [ByteBuffer] = []
    var chunks: [ByteBuffer] = []
    var payloadBytes = 0
    var bodyBytes = 0

    init(workload: CodecBenchmark.Workload, totalBytes: Int) {
        self.workload = workload
        let body = Self.jsonBody(size: workload.messageSize)
        let count = max(1, totalBytes / workload.messageSize)
        let queue = OutboundQueue()
        for index in 0..<count {
            let message = BLIPMessage.request(profile: "rev", properties: ["id": "doc-\(index)", "rev": "1-abc"],
                                              body: body, compressed: workload.compressed, noReply: true)
            messages.append(message)
            bodyBytes += body.readableBytes
            let stream = message.encodedStream()
            var offset = 0
            queue.enqueueRequest(message)
            while let frame = try! queue.nextFrame() {
                let parsed = try! BLIPFrame.parse(frame.bytes)
                frames.append(frame.bytes)
                wirePayloads.append(parsed.payload)
                chunks.append(stream.getSlice(at: stream.readerIndex + offset, length: frame.chunkLength)!)
                offset += frame.chunkLength
            }
            payloadBytes += stream.readableBytes
        }
    }

    /// A JSON document like the ones Sync Gateway sends in `rev` messages.
    static func jsonBody(size: Int) -> ByteBuffer {
        var text = "{"
        var index = 0
        while text.utf8.count < size - 80 {
            text += "\"field\(index)\":{\"name\":\"item \(index)\",\"qty\":\(index * 7 % 100),\"tags\":[\"a\",\"b\"],\"ok\":true},"
            index += 1
        }
        text += "\"end\":\"" + String(repeating: "z", count: max(0, size - text.utf8.count - 10)) + "\"}"
        return ByteBuffer(string: text)
    }
}
