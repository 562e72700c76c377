import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing
@testable import WebView

/// A message's detail names the frames and ACKs that carried it, as the relay passed them on:
/// each frame's direction, flags and size on the wire, each ACK's byte count, within a bound.
@Suite("Frames and ACKs of a message")
struct MessageCarriageTests {
    /// Encodes `message` into frames of at most `frameSize` bytes as a peer would, and decodes
    /// them as the relay does: every frame with MoreComing is told to the history, the message
    /// when complete. `ackAfter`: frame indices after which the receiver ACKs. Returns the
    /// frames' sizes.
    func pass(_ message: BLIPMessage, through script: SessionScript, frameSize: Int = 1024,
              ackAfter: Set<Int> = [], lateAck: Bool = false,
              afterFrame: (Int) -> Void = { _ in }) throws -> [(bytes: Int, flags: FrameFlags)] {
        var limits = BLIPLimits.default
        limits.maxFrameSize = frameSize
        let queue = OutboundQueue(limits: limits)
        queue.enqueueRequest(message)
        let decoder = ConnectionDecoder()
        var frames: [(bytes: Int, flags: FrameFlags)] = []
        while let frame = try queue.nextFrame() {
            frames.append((frame.bytes.readableBytes, frame.flags))
            script.time += 0.001
            var decoded = try decoder.receive(frame.bytes, from: .clientToServer)
            if frame.flags.hasMoreComing {
                script.history.frame(sessionID: script.id, direction: .clientToServer, number: frame.number, flags: frame.flags,
                                     wireBytes: frame.bytes.readableBytes, time: script.time)
            }
            if let whole = decoded.message.take() {
                let analysis = script.analyzer.observe(message: whole, from: .clientToServer, at: script.time)
                script.history.append(sessionID: script.id, whole, direction: .clientToServer, time: script.time,
                                      profile: analysis.profile, analysis: analysis, roundTrip: nil)
            }
            afterFrame(frames.count - 1)
            if ackAfter.contains(frames.count - 1) {
                let received = frames.reduce(0) { $0 + $1.bytes - 2 }
                script.history.ack(sessionID: script.id, AckInfo(type: .ackRequest, number: frame.number, bytes: UInt64(received)),
                                   from: .serverToClient, time: script.time)
            }
        }
        if lateAck {
            script.history.ack(sessionID: script.id, AckInfo(type: .ackRequest, number: 1, bytes: 99_999),
                               from: .serverToClient, time: script.time + 0.5)
        }
        return frames
    }

    func detail(_ script: SessionScript, seq: Int = 0) throws -> [String: Any] {
        try object(try #require(WebJSON.detail(script.recording, seq: seq)))
    }

    func bigRev(_ size: Int, compressed: Bool = false) -> BLIPMessage {
        let body = "{\"name\":\"" + String(repeating: "x", count: size) + "\"}"
        var message = request("rev", 1, [("id", "big"), ("rev", "1-abc"), ("sequence", "1")], body: body)
        message.flags.isCompressed = compressed
        message.flags.isUrgent = true
        return message
    }

    @Test("a rev in several frames lists each frame: direction, MoreComing and the message's flags, its bytes on the wire, when it passed")
    func framesOfAMessage() throws {
        let script = SessionScript()
        let frames = try pass(bigRev(4_000), through: script)
        #expect(frames.count >= 4)
        let json = try detail(script)
        let list = try #require(json["frameList"] as? [[String: Any]])
        #expect(list.map { $0["w"] as? Int } == frames.map(\.bytes), "every frame's size on the wire, the last one too")
        #expect(list.dropLast().allSatisfy { $0["fl"] as? String == "MU" } && list.last?["fl"] as? String == "U")
        #expect(list.allSatisfy { $0["d"] as? Int == 0 })
        let times = list.compactMap { $0["t"] as? Double }
        #expect(times.count == frames.count && times == times.sorted() && times.first! < times.last!)
        #expect(json["frames"] as? Int == frames.count && json["framesNotKept"] as? Int == 0)
    }

    @Test("opened from a capture file, a message in several frames lists each of them, as it did live")
    func framesOfAMessageReadFromACapture() throws {
        var limits = BLIPLimits.default
        limits.maxFrameSize = 1024
        let queue = OutboundQueue(limits: limits)
        queue.enqueueRequest(bigRev(4_000, compressed: true))
        var frames: [ByteBuffer] = []
        while let frame = try queue.nextFrame() { frames.append(frame.bytes) }
        #expect(frames.count >= 2)
        var connection = CapturedConnection(
            index: 0, client: Endpoint(ip: .v4(0x7F00_0001), port: 50_000), server: Endpoint(ip: .v4(0x7F00_0001), port: 4984),
            kind: .webSocket, roleEvidence: .syn, request: nil, response: nil)
        connection.events = frames.enumerated().map { offset, bytes in
            CapturedEvent(time: CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: UInt32(offset) * 1_000_000),
                          direction: .clientToServer, kind: .message(opcode: 2, payload: bytes), packetIndex: offset)
        }
        let history = SessionHistory(limits: .default)
        #expect(CaptureHistoryLoader.record(connection, id: 1, source: "test.pcap", into: history) == 1)
        let recording = try #require(history.recording(1))
        let json = try object(try #require(WebJSON.detail(recording, seq: 0)))
        let list = try #require(json["frameList"] as? [[String: Any]])
        #expect(list.map { $0["w"] as? Int } == frames.map(\.readableBytes), "every frame, not only the last")
        #expect(list.dropLast().allSatisfy { $0["fl"] as? String == "MZU" } && list.last?["fl"] as? String == "ZU")
        let times = list.compactMap { $0["t"] as? Double }
        #expect(times == times.sorted() && times.first! < times.last!, "each at its own capture time")
    }

    @Test("a compressed message's frames are their deflated sizes on the wire")
    func compressedFrames() throws {
        let script = SessionScript()
        var body = ""
        for index in 0..<3_000 { body += "\(index * 7919 % 10007)," }
        var message = request("rev", 1, [("id", "big")], body: "[" + body + "0]")
        message.flags.isCompressed = true
        let frames = try pass(message, through: script, frameSize: 2048)
        #expect(frames.count >= 2)
        let list = try #require(try detail(script)["frameList"] as? [[String: Any]])
        #expect(list.map { $0["w"] as? Int } == frames.map(\.bytes))
        #expect(list.last?["fl"] as? String == "Z")
    }

    @Test("ACKs for messages the relay never saw are dropped: a peer sending them cannot wipe the frames of a message still arriving")
    func bogusAcksAreDropped() throws {
        let script = SessionScript()
        let bogus = { (after: Int) in
            guard after == 0 else { return }
            for number in MessageNumber(100)..<MessageNumber(100 + 2 * 1024) {
                script.history.ack(sessionID: script.id, AckInfo(type: .ackRequest, number: number, bytes: 1),
                                   from: .serverToClient, time: script.time)
            }
        }
        let frames = try pass(bigRev(4_000), through: script, afterFrame: bogus)
        let json = try detail(script)
        let list = try #require(json["frameList"] as? [[String: Any]])
        #expect(list.map { $0["w"] as? Int } == frames.map(\.bytes), "every frame kept, the first one too")
        #expect(json["acks"] as? Int == 0)
    }

    @Test("ACKs the receiver sent for a message, while it arrived and after its last frame, with their byte counts")
    func acksOfAMessage() throws {
        let script = SessionScript()
        let frames = try pass(bigRev(4_000), through: script, ackAfter: [1], lateAck: true)
        let json = try detail(script)
        let acks = try #require(json["ackList"] as? [[String: Any]])
        #expect(acks.count == 2 && json["acks"] as? Int == 2)
        #expect(acks.allSatisfy { $0["from"] as? Int == 1 }, "sent by the server, the message's receiver")
        #expect(acks[0]["bytes"] as? Int == frames[0].bytes - 2 + frames[1].bytes - 2)
        #expect(acks[1]["bytes"] as? Int == 99_999)
    }

    @Test("an ACK after its message's last frame finds it 999 records later by its number alone; one naming a small one-frame message, no reply, or a message past the newest 1,024 records is dropped")
    func lateAcksByNumber() throws {
        let script = SessionScript()
        _ = try pass(bigRev(4_000), through: script)  // request 1, several frames: seq 0
        for number in MessageNumber(2)...1_000 { script.client(request("changes", number, [("since", "\(number)")])) }
        let ack = { (type: MessageType, number: MessageNumber, from: BLIPDirection) in
            script.history.ack(sessionID: script.id, AckInfo(type: type, number: number, bytes: 50_000), from: from, time: script.time)
        }
        ack(.ackRequest, 1, .serverToClient)
        #expect(try detail(script)["acks"] as? Int == 1)

        ack(.ackRequest, 500, .serverToClient)
        let small = try #require(script.recording.record(seq: 499))
        #expect(small.number == 500 && small.carriage == nil, "a 30-byte request in one frame is never ACKed")
        ack(.ackResponse, 1, .clientToServer)
        #expect(try detail(script)["acks"] as? Int == 1, "request 1 has no reply to ACK")

        for number in MessageNumber(1_001)...1_100 { script.client(request("changes", number, [("since", "\(number)")])) }
        ack(.ackRequest, 1, .serverToClient)
        #expect(try detail(script)["acks"] as? Int == 1, "1,099 records later: past the window, dropped")
    }

    @Test("a message whole in one frame is its own single frame; nothing is kept for it but its record")
    func singleFrame() throws {
        let script = SessionScript()
        let frames = try pass(request("getCheckpoint", 1, [("client", "c")]), through: script)
        #expect(frames.count == 1)
        #expect(script.recording.record(seq: 0)?.carriage == nil)
        let list = try #require(try detail(script)["frameList"] as? [[String: Any]])
        #expect(list.count == 1 && list[0]["w"] as? Int == frames[0].bytes)
    }

    @Test("frames kept per message are bounded; the rest are counted")
    func bounded() throws {
        var limits = WebViewLimits()
        limits.maxFramesPerMessage = 2
        let script = SessionScript(limits: limits)
        let frames = try pass(bigRev(6_000), through: script, ackAfter: [0, 1, 2, 3])
        let json = try detail(script)
        let list = try #require(json["frameList"] as? [[String: Any]])
        #expect(list.count == 3, "two kept, and the last")
        #expect(json["framesNotKept"] as? Int == frames.count - 3)
        #expect(list.last?["w"] as? Int == frames.last?.bytes, "the last frame's size is right though frames were not kept")
        #expect((json["ackList"] as? [Any])?.count == 2 && json["acksNotKept"] as? Int == 2 && json["acks"] as? Int == 4)
    }
}
