import BLIPCore
import Foundation
import ReplicationNames
import NIOCore

/// `blipscope-bench codec`: decodes and encodes the same frames through BLIPCore (decoding with
/// ISA-L and with zlib) and through bare library calls (``BareCodec``), and prints frames/s, MB/s
/// and each time against bare zlib's.
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
        Workload(name: "json 300 B, compressed", messageSize: 300, compressed: true),
        Workload(name: "300 B, uncompressed", messageSize: 300, compressed: false),
        Workload(name: "4 KiB, uncompressed", messageSize: 4_000, compressed: false),
        Workload(name: "16 KiB, uncompressed", messageSize: 16_000, compressed: false),
    ]

    func run() throws {
        print(BenchMachine.current().line)
        print("BLIP codec benchmark: \(megabytes) MB of message payload per workload, best of \(rounds)")
        print("decode: BLIPCore as it runs (ISA-L CRC, ISA-L inflate for large frames, zlib for small ones), with ISA-L")
        print("        for every frame (\(DecodeLibrary.environmentVariable)=isal-only) and with zlib (=zlib),")
        print("        bare ISA-L inflate + crc; encode: BLIPCore (zlib deflate), bare ISA-L deflate; all against bare zlib")
        print("workload".padded(to: 26), "op".padded(to: 22), "frames/s".padded(to: 10), "MB/s".padded(to: 7),
              "zlib MB/s".padded(to: 10), "time/zlib".padded(to: 10), "wire/zlib")
        for workload in Self.workloads where only.map({ workload.name.contains($0) }) ?? true {
            let data = BenchData(workload: workload, totalBytes: megabytes * 1_000_000)
            let bareDecode = codecOnly ? .nan : best { precondition(BareCodec.zlibInflate(data) == data.payloadBytes) }
            let decode = try best { try decodeWithCodec(data, library: .isal) }
            report(workload, "decode", data, decode, bareDecode)
            if !codecOnly {
                report(workload, "decode, ISA-L only", data, try best { try decodeWithCodec(data, library: .isalOnly) }, bareDecode)
                report(workload, "decode, zlib", data, try best { try decodeWithCodec(data, library: .zlib) }, bareDecode)
                report(workload, "bare ISA-L inflate+crc", data,
                       best { precondition(BareCodec.isalInflate(data) == data.payloadBytes) }, bareDecode)
            }
            var zlibSize = 0
            let bareEncode = codecOnly ? .nan : best { zlibSize = BareCodec.zlibDeflate(data, level: 6) }
            report(workload, "encode", data, try best { try encodeWithCodec(data) }, bareEncode)
            if !codecOnly && workload.compressed {
                var size = 0
                report(workload, "bare zlib deflate L1", data, best { size = BareCodec.zlibDeflate(data, level: 1) }, bareEncode,
                       wire: Double(size) / Double(zlibSize))
                for level in [1, 3] as [UInt32] {
                    precondition(BareCodec.isalDeflateRoundTrips(data, level: level), "ISA-L level \(level) did not round-trip")
                    report(workload, "bare ISA-L deflate L\(level)", data, best { size = BareCodec.isalDeflate(data, level: level) },
                           bareEncode, wire: Double(size) / Double(zlibSize))
                }
            }
        }
        guard !codecOnly, only == nil || "crc".contains(only!) else { return }
        let crcData = BenchData(workload: Workload(name: "crc", messageSize: 16_000, compressed: false),
                                totalBytes: megabytes * 1_000_000)
        let zlibCRC = best { _ = BareCodec.crc(crcData, using: .zlib) }
        let isalCRC = best { _ = BareCodec.crc(crcData, using: .isal) }
        precondition(BareCodec.crc(crcData, using: .zlib) == BareCodec.crc(crcData, using: .isal))
        print("CRC-32 of 16 KiB chunks".padded(to: 26), "ISA-L crc32_gzip_refl".padded(to: 22), "".padded(to: 10),
              String(format: "%.0f", Double(crcData.payloadBytes) / isalCRC / 1e6).padded(to: 7),
              String(format: "%.0f", Double(crcData.payloadBytes) / zlibCRC / 1e6).padded(to: 10),
              String(format: "%.2f", isalCRC / zlibCRC))
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

    /// One line: `seconds` against the bare zlib baseline `bare`; `wire` is the compressed size
    /// against bare zlib level 6 (deflate lines only).
    private func report(_ workload: Workload, _ op: String, _ data: BenchData, _ seconds: Double, _ bare: Double,
                        wire: Double? = nil) {
        print(workload.name.padded(to: 26), op.padded(to: 22),
              String(format: "%.0f", Double(data.frames.count) / seconds).padded(to: 10),
              String(format: "%.0f", Double(data.payloadBytes) / seconds / 1e6).padded(to: 7),
              String(format: "%.0f", Double(data.payloadBytes) / bare / 1e6).padded(to: 10),
              String(format: "%.2f", seconds / bare).padded(to: 10),
              wire.map { String(format: "%.2f", $0) } ?? "")
    }


    // MARK: BLIPCore

    private func decodeWithCodec(_ data: BenchData, library: DecodeLibrary) throws {
        let decoder = DirectionDecoder(library: library)
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
            let message = BLIPMessage.request(profile: ReplicationProfile.rev.rawValue, properties: Properties([.id: "doc-\(index)", .rev: "1-abc"]),
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
