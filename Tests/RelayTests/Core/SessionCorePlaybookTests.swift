import BLIPCore
import BLIPNIO
import struct Capture.CaptureTimestamp
import Mediation
import NIOCore
import Testing
import WebSocketWire
@testable import Relay

/// The relay session told as scripts: inputs go into a ``SessionCore``, and the test checks the
/// exact actions that come out (bytes written, flushes, reads, timers, closes) and the events.
/// No sockets: this is where relay behaviour is pinned down; the loopback suites check that the
/// NIO side carries the actions out.
@Suite("Session core playbook")
struct SessionCorePlaybookTests {
    /// How long forwarded frames may wait for inspection unless a test says otherwise.
    static let defaultDelay = RelayLimits().inspectionDelay

    /// A core with both sides attached (the session open), and what its opening produced.
    final class Playbook {
        let core: SessionCore
        /// The time the next input carries: the shell's clock, set by the story.
        var clock = ReceiptTime(uptime: .uptimeNanoseconds(5_000_000_000), wall: CaptureTimestamp(seconds: 1_700_000_000, nanoseconds: 0))
        let recorder: RecordingObserver
        let client = BLIPEndpoint()
        let server = BLIPEndpoint()
        private(set) var openingActions: [SessionAction] = []

        /// `interests`: the recording observer's (add ``RelayEventInterests/frameBytes`` to see what a capture gets).
        init(interests: RelayEventInterests = .all, _ configure: (inout RelayConfiguration) -> Void = { _ in }) {
            recorder = RecordingObserver(interests: interests)
            var configuration = RelayConfiguration(upstream: .single(UpstreamURL("ws://127.0.0.1:4984")!))
            configuration.idleTimeout = .seconds(8)
            configure(&configuration)
            let info = SessionInfo(id: 7, client: ClientAddress(peer: try? SocketAddress(ipAddress: "127.0.0.1", port: 50_000)), user: nil, database: "db", target: "/db/_blipsync",
                                   upstream: "ws://127.0.0.1:4984")
            core = SessionCore(info: info, configuration: configuration, observers: ObserverSet([recorder]))
            openingActions = on(.attached(.upstream, at: clock)) + on(.attached(.client, at: clock))
        }

        @discardableResult
        func on(_ input: SessionInput) -> [SessionAction] {
            var actions: [SessionAction] = []
            core.handle(input, into: &actions)
            return actions
        }

        /// The client's next BLIP frame for `request`, as a masked WebSocket frame.
        func clientFrame(_ request: BLIPMessage) throws -> ByteBuffer {
            _ = client.send(request: request)
            let frame = try #require(try client.nextFrame())
            return WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary, payload: frame.bytes,
                                              mask: WebSocketMaskingKey(1, 2, 3, 4))
        }

        func serverFrame(_ request: BLIPMessage) throws -> ByteBuffer {
            _ = server.send(request: request)
            let frame = try #require(try server.nextFrame())
            return WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary, payload: frame.bytes, mask: nil)
        }

        var events: [RelayEvent] { recorder.all }
    }

    static func control(_ opcode: UInt8, _ payload: [UInt8], masked: Bool) -> ByteBuffer {
        WebSocketFrameWriter.frame(opcode: opcode, payload: ByteBuffer(bytes: payload),
                                   mask: masked ? WebSocketMaskingKey(9, 8, 7, 6) : nil)
    }

    /// The payload of a frame the core wrote, unmasked.
    static func payload(of frame: ByteBuffer) -> [UInt8] {
        let header = frame.readableBytesView.withUnsafeBytes { WebSocketFrameHeader.parse($0) }!
        var payload = frame.getSlice(at: frame.readerIndex + header.headerLength, length: Int(header.payloadLength))!
        header.maskingKey?.unmask(&payload)
        return Array(payload.readableBytesView)
    }

    @Test("opening: the idle check is armed, nothing is read before NIO asks, then reads are granted")
    func opening() {
        let play = Playbook()
        #expect(play.openingActions == [.schedule(.idleCheck, .seconds(2))])
        #expect(play.on(.readRequested(.client)) == [.read(.client)])
        #expect(play.events.contains { if case .sessionOpened = $0 { true } else { false } })
    }

    @Test("pass-through: a burst of frames leaves as the bytes it came in, one write; decoded after the flush")
    func passThrough() throws {
        let play = Playbook { $0.limits.inspectionDelay = .zero }
        var burst = try play.clientFrame(.request(profile: "one", noReply: true))
        var second = try play.clientFrame(.request(profile: "two", noReply: true))
        burst.writeBuffer(&second)
        #expect(play.on(.bytes(.client, burst, at: play.clock)) == [.write(.upstream, burst)])
        #expect(!play.events.contains { if case .message = $0 { true } else { false } }, "nothing decoded before the flush")
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream)])
        let profiles = play.events.compactMap { event -> String? in
            if case .message(let message) = event { return message.message.profile } else { return nil }
        }
        #expect(profiles == ["one", "two"])
    }

    @Test("not decoding: frames leave as they came and are counted, per read; a capture gets each one's bytes, nothing is decoded")
    func notDecoding() throws {
        let play = Playbook(interests: RelayEventInterests.all.union(.frameBytes)) {
            $0.decodes = false
            $0.limits.inspectionDelay = .zero
        }
        let request = try play.clientFrame(.request(profile: "getCheckpoint"))
        let reply = try play.serverFrame(.request(profile: "changes", noReply: true))
        #expect(play.on(.bytes(.client, request, at: play.clock)) == [.write(.upstream, request)])
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream)])
        #expect(play.on(.bytes(.upstream, reply, at: play.clock)) == [.write(.client, reply)])
        #expect(play.on(.readComplete(.upstream)) == [.flush(.client)])

        #expect(Self.messages(play).isEmpty, "no message decoded")
        let frames = play.events.compactMap { event -> FrameEvent? in
            if case .frame(let frame) = event { return frame } else { return nil }
        }
        // What a capture records: the BLIP frame as it travelled (unmasked), undecoded (number 0).
        #expect(frames.map(\.direction) == [.clientToServer, .serverToClient])
        #expect(frames.map { $0.bytes.map { Array($0.readableBytesView) } } == [Self.payload(of: request), Self.payload(of: reply)])
        #expect(frames.allSatisfy { $0.number == 0 && $0.decoded == nil })
        // Metrics count them from each read's report: one frame each way, its payload's bytes.
        let forwarded = play.events.compactMap { event -> [Int]? in
            guard case .forwarded(_, let direction, let count, let bytes) = event else { return nil }
            return [direction.rawValue, count, bytes]
        }
        #expect(forwarded == [[0, 1, Self.payload(of: request).count], [1, 1, Self.payload(of: reply).count]])
        let statistics = play.core.currentStatistics
        #expect(statistics.framesForwarded == [1, 1])
        #expect(statistics.messagesDecoded == [0, 0])
        #expect(statistics.decoding == false)
        #expect(play.core.info.analyzer == nil, "nothing to analyse")
    }

    /// The messages reported so far: direction, profile (a reply: its request's) and the time read.
    static func messages(_ play: Playbook) -> [(BLIPDirection, String?, ReceiptTime?)] {
        play.events.compactMap { event in
            guard case .message(let message) = event else { return nil }
            return (message.direction, message.message.profile ?? message.requestProfile, message.time)
        }
    }

    @Test("inspection waits for its timer: the frames of two reads are decoded together, in the order read, each at its read's time")
    func inspectionWaitsForItsTimer() throws {
        let play = Playbook()  // the default delay
        let request = try play.clientFrame(.request(profile: "getCheckpoint"))
        let clientRead = play.clock
        #expect(play.on(.bytes(.client, request, at: play.clock)) == [.write(.upstream, request)])
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream), .schedule(.inspection, Self.defaultDelay)])

        // The gateway's answer, in a later read: forwarded at once, the timer already armed.
        let upstreamRequest = try play.serverFrame(.request(profile: "changes"))
        play.clock.uptime = play.clock.uptime + .milliseconds(3)
        let upstreamRead = play.clock
        #expect(play.on(.bytes(.upstream, upstreamRequest, at: play.clock)) == [.write(.client, upstreamRequest)])
        #expect(play.on(.readComplete(.upstream)) == [.flush(.client)])
        #expect(Self.messages(play).isEmpty, "nothing decoded before the timer")

        play.clock.uptime = play.clock.uptime + Self.defaultDelay
        #expect(play.on(.timerFired(.inspection, at: play.clock)) == [])
        let messages = Self.messages(play)
        #expect(messages.map(\.0) == [.clientToServer, .serverToClient])
        #expect(messages.map(\.1) == ["getCheckpoint", "changes"])
        #expect(messages.map(\.2) == [clientRead, upstreamRead], "each stamped with its read's time, not the timer's")
    }

    @Test("a request in several frames answered before its end: the early error names the request's profile (from the first frame's properties) and round trip")
    func requestAnsweredBeforeItsEnd() throws {
        let play = Playbook()
        func forward(_ frame: ByteBuffer, from side: SessionSide) {
            let wire = WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary, payload: frame,
                                                  mask: side == .client ? WebSocketMaskingKey(1, 2, 3, 4) : nil)
            #expect(play.on(.bytes(side, wire, at: play.clock)) == [.write(side.other, wire)])
            play.on(.readComplete(side))
        }
        // 40,000 bytes: three frames of at most 16 KiB, the properties (and profile) in the first.
        play.client.send(request: .request(profile: "putAttachment", body: ByteBuffer(repeating: 0x61, count: 40_000)))
        forward(try #require(try play.client.nextFrame()).bytes, from: .client)
        // The gateway refuses the request on its first frame, before the rest has come.
        play.server.send(reply: .error(to: 1, domain: "HTTP", code: 413, message: "too large"))
        forward(try #require(try play.server.nextFrame()).bytes, from: .upstream)
        var frames = 1
        while let frame = try play.client.nextFrame() {
            frames += 1
            forward(frame.bytes, from: .client)
        }
        #expect(frames == 3)
        play.on(.timerFired(.inspection, at: play.clock))

        let messages: [MessageEvent] = play.events.compactMap { if case .message(let message) = $0 { message } else { nil } }
        #expect(messages.map(\.direction) == [.serverToClient, .clientToServer], "the error completes first")
        let refusal = try #require(messages.first)
        #expect(refusal.message.type == .error && refusal.requestProfile == "putAttachment")
        #expect(refusal.roundTrip != nil, "timed from the request's first frame")
        #expect(messages.last?.message.profile == "putAttachment" && messages.last?.message.frameCount == 3)
    }

    @Test("inspection: a full batch is decoded as soon as it fills, after its bytes are flushed; the armed timer stays armed")
    func fullInspectionBatch() throws {
        let play = Playbook { $0.limits.inspectionBatchFrames = 2 }
        let first = try play.clientFrame(.request(profile: "one", noReply: true))
        _ = play.on(.bytes(.client, first, at: play.clock))
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream), .schedule(.inspection, Self.defaultDelay)])
        let second = try play.clientFrame(.request(profile: "two", noReply: true))
        #expect(play.on(.bytes(.client, second, at: play.clock)) == [.write(.upstream, second), .flush(.upstream)],
                "no cancel: cancelling would not disarm the event loop's timer, and the next frame needs one")
        #expect(Self.messages(play).map(\.1) == ["one", "two"])
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream)])
        #expect(play.on(.timerFired(.inspection, at: play.clock)) == [], "a timer that comes after a full batch finds nothing to do")
        #expect(Self.messages(play).count == 2)
    }

    @Test("inspection under a steady stream: the timer is armed once per delay, not once per batch; no frame waits past it")
    func steadyStreamArmsOneTimerPerDelay() throws {
        let play = Playbook { $0.limits.inspectionBatchFrames = 3 }
        var schedules = 0
        var profiles: [String] = []
        func read(_ profile: String) throws {
            let frame = try play.clientFrame(.request(profile: profile, noReply: true))
            profiles.append(profile)
            _ = play.on(.bytes(.client, frame, at: play.clock))
            schedules += play.on(.readComplete(.client)).filter { $0 == .schedule(.inspection, Self.defaultDelay) }.count
        }
        // Seven reads before the timer fires: batches of three fill twice and are inspected at once.
        for index in 0..<7 { try read("r\(index)") }
        #expect(schedules == 1, "armed by the first read only")
        #expect(Self.messages(play).count == 6)
        #expect(play.core.uninspected.count == 1, "the seventh came after the second batch and waits for the timer")

        // The timer armed for r0 fires: r6 is inspected, well within the delay of its read.
        #expect(play.on(.timerFired(.inspection, at: play.clock)) == [])
        #expect(Self.messages(play).map(\.1) == profiles)

        // The next read arms it again.
        try read("r7")
        #expect(schedules == 2)
        #expect(play.on(.timerFired(.inspection, at: play.clock)) == [])
        #expect(Self.messages(play).map(\.1) == profiles, "each once, in the order read")
    }

    @Test("inspection: one read of many small frames never queues more than a batch; every frame is forwarded before it is decoded")
    func readOfManyFrames() throws {
        let play = Playbook { $0.limits.inspectionBatchFrames = 2 }
        let profiles = ["a", "b", "c", "d", "e"]
        var frames: [ByteBuffer] = []
        for profile in profiles { frames.append(try play.clientFrame(.request(profile: profile, noReply: true))) }
        var read = ByteBuffer()
        for frame in frames { read.writeImmutableBuffer(frame) }
        let actions = play.on(.bytes(.client, read, at: play.clock))
        // Frames a–b and c–d each fill the batch: written and flushed, then decoded; e waits.
        let written = actions.compactMap { action -> [UInt8]? in
            if case .write(.upstream, let bytes) = action { return Array(bytes.readableBytesView) } else { return nil }
        }
        #expect(written.flatMap { $0 } == Array(read.readableBytesView), "the read's bytes leave unchanged, in order")
        #expect(actions.filter { $0 == .flush(.upstream) }.count == 2)
        #expect(Self.messages(play).map(\.1) == ["a", "b", "c", "d"])
        #expect(play.core.uninspected.count == 1)
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream), .schedule(.inspection, Self.defaultDelay)])
        #expect(play.on(.timerFired(.inspection, at: play.clock)) == [])
        #expect(Self.messages(play).map(\.1) == profiles, "each once, in the order read")
    }

    @Test("inspection: bytes fill a batch as frames do, a read's whole buffer counted once")
    func inspectionBatchBytes() throws {
        let play = Playbook { $0.limits.inspectionBatchBytes = 1000 }
        let large = try play.clientFrame(.request(profile: "rev", body: ByteBuffer(repeating: 0x41, count: 1200), noReply: true))
        _ = play.on(.bytes(.client, large, at: play.clock))
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream)])
        #expect(Self.messages(play).map(\.1) == ["rev"])

        // A small frame counts the whole buffer of the read it came in: its slice keeps that alive.
        let small = try play.clientFrame(.request(profile: "norev", noReply: true))
        var read = ByteBuffer()
        read.reserveCapacity(4096)
        read.writeImmutableBuffer(small)
        _ = play.on(.bytes(.client, read, at: play.clock))
        #expect(play.on(.readComplete(.client)) == [.flush(.upstream)])
        #expect(Self.messages(play).map(\.1) == ["rev", "norev"])
    }

    @Test("inspection: what waits is reported before the session's end when a connection drops")
    func inspectionBeforeTheEnd() throws {
        let play = Playbook()
        let request = try play.clientFrame(.request(profile: "subChanges", noReply: true))
        _ = play.on(.bytes(.client, request, at: play.clock))
        _ = play.on(.readComplete(.client))
        #expect(Self.messages(play).isEmpty)
        _ = play.on(.connectionClosed(.client, at: play.clock))
        _ = play.on(.connectionClosed(.upstream, at: play.clock))
        let kinds = play.events.compactMap { event -> String? in
            switch event {
            case .message: "message"
            case .sessionClosed: "closed"
            default: nil
            }
        }
        #expect(kinds == ["message", "closed"])
    }

    @Test("ping per hop: each side's PING is answered on its own hop, masked only toward the upstream")
    func pingPerHop() throws {
        let play = Playbook()
        let fromClient = play.on(.bytes(.client, Self.control(WebSocketFrameHeader.ping, [1, 2], masked: true), at: play.clock))
        guard case .write(.client, let pong)? = fromClient.first else { return #expect(Bool(false), "\(fromClient)") }
        #expect(fromClient.dropFirst() == [.flush(.client)])
        #expect(pong.readableBytesView.first == 0x8A && pong.readableBytesView.dropFirst().first == 2, "unmasked PONG [1, 2]")
        #expect(Self.payload(of: pong) == [1, 2])
        let fromUpstream = play.on(.bytes(.upstream, Self.control(WebSocketFrameHeader.ping, [3], masked: false), at: play.clock))
        guard case .write(.upstream, let masked)? = fromUpstream.first else { return #expect(Bool(false)) }
        #expect(masked.readableBytesView.dropFirst().first == 0x81, "masked toward the upstream, 1 byte")
        #expect(Self.payload(of: masked) == [3])
        #expect(play.on(.bytes(.client, Self.control(WebSocketFrameHeader.pong, [], masked: true), at: play.clock)) == [], "PONGs stop here")
    }

    @Test("close, client first: passed on as received, timer armed; the upstream's answer closes both; the end")
    func closeClientFirst() {
        let play = Playbook()
        let clientClose = Self.control(WebSocketFrameHeader.close, [0x03, 0xE8] + Array("bye".utf8), masked: true)
        #expect(play.on(.bytes(.client, clientClose, at: play.clock)) == [.write(.upstream, clientClose), .flush(.upstream),
                                                           .schedule(.closeTimeout, .seconds(5))])
        let upstreamClose = Self.control(WebSocketFrameHeader.close, [0x03, 0xE8], masked: false)
        #expect(play.on(.bytes(.upstream, upstreamClose, at: play.clock)) == [.write(.client, upstreamClose), .flush(.client),
                                                               .close(.client), .close(.upstream)])
        #expect(play.on(.connectionClosed(.upstream, at: play.clock)) == [])
        #expect(play.on(.connectionClosed(.client, at: play.clock)) == [.cancel(.closeTimeout), .cancel(.idleCheck), .finished])
        let summary = play.events.compactMap { event -> SessionSummary? in
            if case .sessionClosed(let summary) = event { return summary } else { return nil }
        }.first
        #expect(summary?.clientClose?.code == 1000 && summary?.clientClose?.reason == "bye")
        #expect(summary?.upstreamClose?.code == 1000 && summary?.relayError == nil)
    }

    @Test("close, upstream first, and nobody answers: the close timeout closes both")
    func closeTimesOut() {
        let play = Playbook()
        let upstreamClose = Self.control(WebSocketFrameHeader.close, [0x03, 0xE9], masked: false)
        #expect(play.on(.bytes(.upstream, upstreamClose, at: play.clock)).last == .schedule(.closeTimeout, .seconds(5)))
        #expect(play.on(.timerFired(.closeTimeout, at: play.clock)) == [.close(.client), .close(.upstream)])
    }

    @Test("a TCP drop without CLOSE is passed on as a drop, and reported as 1006")
    func tcpDrop() {
        let play = Playbook()
        #expect(play.on(.connectionClosed(.client, at: play.clock)) == [.drop(.upstream)])
        #expect(play.on(.connectionClosed(.upstream, at: play.clock)) == [.cancel(.idleCheck), .finished])
        guard case .sessionClosed(let summary)? = play.events.last else { return #expect(Bool(false)) }
        #expect(summary.clientClose?.code == 1006 && summary.clientClose?.abrupt == true)
        // The upstream's end was the relay's doing: nothing is recorded as sent by it.
        #expect(summary.upstreamClose == nil)
    }

    @Test("Sync Gateway killed: the upstream's drop is the one reported, and the analyzer hears only of it")
    func upstreamDrop() throws {
        let play = Playbook()
        #expect(play.on(.connectionClosed(.upstream, at: play.clock)) == [.drop(.client)])
        #expect(play.on(.connectionClosed(.client, at: play.clock)) == [.cancel(.idleCheck), .finished])
        guard case .sessionClosed(let summary)? = play.events.last else { return #expect(Bool(false)) }
        #expect(summary.upstreamClose?.abrupt == true && summary.clientClose == nil)
        let closes = try #require(summary.replication?.closes)
        #expect(closes.map(\.from) == ["server"] && closes.first?.isDrop == true)
    }

    @Test("idle: four quiet checks send 1001 to both sides; traffic in between starts the count again")
    func idleTimeout() throws {
        let play = Playbook()
        for _ in 0..<3 { #expect(play.on(.timerFired(.idleCheck, at: play.clock)) == [.schedule(.idleCheck, .seconds(2))]) }
        _ = play.on(.bytes(.client, try play.clientFrame(.request(profile: "x", noReply: true)), at: play.clock))
        // The check after the traffic is not quiet; four quiet ones follow it.
        for _ in 0..<4 { #expect(play.on(.timerFired(.idleCheck, at: play.clock)) == [.schedule(.idleCheck, .seconds(2))]) }
        let actions = play.on(.timerFired(.idleCheck, at: play.clock))
        let closes = actions.compactMap { action -> (SessionSide, [UInt8])? in
            if case .write(let side, let bytes) = action { return (side, Self.payload(of: bytes)) } else { return nil }
        }
        #expect(closes.map(\.0) == [.client, .upstream])
        #expect(closes.allSatisfy { $0.1.prefix(2) == [0x03, 0xE9] }, "1001 going away")
        #expect(actions.last == .schedule(.closeTimeout, .seconds(5)))
    }

    @Test("back-pressure: a side is not read while its partner cannot take writes, and read again when it can")
    func backPressure() {
        let play = Playbook()
        #expect(play.on(.writability(.upstream, isWritable: false)) == [])
        #expect(play.on(.readRequested(.client)) == [], "held")
        #expect(play.on(.readRequested(.upstream)) == [.read(.upstream)], "the other way is not held")
        #expect(play.on(.writability(.upstream, isWritable: true)) == [.read(.client)])
        let pauses = play.events.compactMap { event -> Bool? in
            if case .flowControl(_, _, let paused) = event { return paused } else { return nil }
        }
        #expect(pauses == [true, false])
    }

    @Test("a capture's read gate holds both sides until released")
    func readGate() {
        let play = Playbook()
        _ = play.on(.holdReading)
        #expect(play.on(.readRequested(.client)) == [] && play.on(.readRequested(.upstream)) == [])
        #expect(play.on(.releaseReading) == [.read(.client), .read(.upstream)])
    }

    @Test("strict: a frame that does not decode is not forwarded; the session closes 1011")
    func strictDecodesBeforeForwarding() throws {
        let play = Playbook { $0.strict = true }
        var good = try play.clientFrame(.request(profile: "ok", noReply: true))
        #expect(play.on(.bytes(.client, good, at: play.clock)) == [.write(.upstream, good)])
        // A frame whose checksum is wrong: its last byte flipped.
        good = try play.clientFrame(.request(profile: "bad", noReply: true))
        var bytes = Array(good.readableBytesView)
        bytes[bytes.count - 1] ^= 0x55
        let actions = play.on(.bytes(.client, ByteBuffer(bytes: bytes), at: play.clock))
        #expect(!actions.contains(.write(.upstream, ByteBuffer(bytes: bytes))), "the bad frame never reaches the upstream")
        let closes = actions.compactMap { action -> [UInt8]? in
            if case .write(_, let frame) = action { return Self.payload(of: frame) } else { return nil }
        }
        #expect(closes.count == 2 && closes.allSatisfy { $0.prefix(2) == [0x03, 0xF3] }, "1011 to both sides")
    }

    @Test("an unmasked frame from the client closes the session with 1002")
    func unmaskedClientFrame() {
        let play = Playbook()
        let actions = play.on(.bytes(.client, Self.control(WebSocketFrameHeader.binary, [1, 2, 3], masked: false), at: play.clock))
        let codes = actions.compactMap { action -> [UInt8]? in
            if case .write(_, let frame) = action { return Array(Self.payload(of: frame).prefix(2)) } else { return nil }
        }
        #expect(codes == [[0x03, 0xEA], [0x03, 0xEA]])
        #expect(play.on(.bytes(.client, Self.control(WebSocketFrameHeader.binary, [4], masked: true), at: play.clock)) == [.drop(.client)],
                "more bytes from a peer that broke the framing drop it")
    }

    @Test("mediating: a denied request gets its ERR from the relay; the upstream sees nothing of it")
    func deniedRequest() throws {
        let play = Playbook { configuration in
            configuration.mediationPolicy = { _ in DenyProfilesPolicy(profiles: ["secret"]) }
        }
        let frame = try play.clientFrame(.request(profile: "secret"))
        let actions = play.on(.bytes(.client, frame, at: play.clock))
        #expect(!actions.contains { if case .write(.upstream, _) = $0 { true } else { false } })
        guard case .write(.client, let reply)? = actions.first else { return #expect(Bool(false), "\(actions)") }
        let decoded = try play.client.receive(ByteBuffer(bytes: Self.payload(of: reply)))
        #expect(decoded.message?.type == .error && decoded.message?.properties["Error-Code"] == "403")
        #expect(actions.contains(.flush(.client)), "the ERR goes back at once")
        #expect(play.events.contains { if case .verdict(let verdict) = $0 { verdict.action == "deny 403" } else { false } })
    }
}

extension SessionCorePlaybookTests {
    /// A push through a policy that keeps `secret` from the server: the analyzer counts what the
    /// server got (one rev) and the 403 the client got, paired with the rev it answers.
    @Test("mediating: a withheld rev is not counted as pushed; the relay's ERR is the reply the client got")
    func withheldRevIsAnalysedAsWithheld() throws {
        let play = Playbook { configuration in
            configuration.mediationPolicy = { _ in
                ClosurePolicy { head in
                    head.type == .request && head.properties["id"] == "secret" ? .deny(ErrorReply(code: 403), rule: "no-secrets") : .pass
                }
            }
        }
        play.on(.bytes(.client, try play.clientFrame(.request(profile: "rev", properties: ["id": "a", "rev": "1-a"], body: body("{}"))), at: play.clock))
        play.on(.bytes(.client, try play.clientFrame(.request(profile: "rev", properties: ["id": "secret", "rev": "1-s"], body: body("{}"))), at: play.clock))
        let analyzer = try #require(play.core.info.analyzer)
        let summary = analyzer.summary()
        // The server got one rev and has not answered it: sent, not (yet) stored.
        #expect(summary.pushed.revisionsSent == 1 && summary.pushed.documents == 0 && summary.pushed.revisionsStored == 0)
        #expect(summary.pushed.revisionsWithheld == 1 && summary.pushed.revisionsRefused == 1)
        #expect(summary.errorsByDomainAndCode == ["HTTP 403": 1])
        #expect(analyzer.timeline(docID: "secret").map(\.kind) == [.revWithheld, .revRefused])
        let relayReplies = play.events.compactMap { event -> MessageEvent? in
            if case .message(let message) = event, message.byRelay { message } else { nil }
        }
        #expect(relayReplies.map(\.message.number) == [2] && relayReplies.first?.direction == .serverToClient)
        #expect(relayReplies.first?.requestProfile == "rev")
        #expect(analyzer.stuckFindings(now: .infinity).compactMap(\.docID) == ["a"], "only the delivered rev awaits a reply")
    }
}

extension SessionCorePlaybookTests {
    /// Sync Gateway writes a 16 KiB frame in pieces; the relay forwards whole frames only, so
    /// between the pieces nothing travels back that could carry TCP's acknowledgement, and the
    /// sender waited 40 ms (the kernel's delayed ACK) for each. A read that ends inside a frame
    /// asks for the acknowledgement at once; one that ends at a frame's end does not.
    @Test("a read that ends inside a frame is acknowledged at once; one that ends between frames is not")
    func midFrameReadIsAcknowledged() throws {
        let play = Playbook { $0.limits.inspectionDelay = .zero }
        let frame = try play.serverFrame(.request(profile: "rev", body: ByteBuffer(repeating: 0x61, count: 16 * 1024), noReply: true))
        let head = frame.getSlice(at: frame.readerIndex, length: 4096)!
        let tail = frame.getSlice(at: frame.readerIndex + 4096, length: frame.readableBytes - 4096)!

        #expect(play.on(.bytes(.upstream, head, at: play.clock)).isEmpty, "no whole frame to forward yet")
        #expect(play.on(.readComplete(.upstream)) == [.flush(.client), .acknowledge(.upstream)])
        #expect(play.on(.bytes(.upstream, tail, at: play.clock)) == [.write(.client, frame)])
        #expect(play.on(.readComplete(.upstream)) == [.flush(.client)])
        #expect(play.core.currentStatistics.immediateAcks == [0, 1])
    }

    @Test("with acknowledgeMidFrame off, a read inside a frame asks for nothing")
    func midFrameAcknowledgementCanBeTurnedOff() throws {
        let play = Playbook { $0.limits.acknowledgeMidFrame = false }
        let frame = try play.serverFrame(.request(profile: "rev", body: ByteBuffer(repeating: 0x61, count: 8 * 1024), noReply: true))
        play.on(.bytes(.upstream, frame.getSlice(at: frame.readerIndex, length: 100)!, at: play.clock))
        #expect(!play.on(.readComplete(.upstream)).contains(.acknowledge(.upstream)))
    }
}
