import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import Logging
import NIOCore
import Testing
@testable import Relay

/// Inspection that waits (``RelayLimits/inspectionDelay``), through real sockets: forwarding does
/// not wait for it, every message is still reported, each at the time the relay read it.
@Suite("Relay inspection delay")
struct RelayInspectionDelayTests {
    @Test("a waiting inspection reports the reply at the time it was read: before the client had it, not when decoded")
    func stampedWhenRead() async throws {
        let harness = try await RelayHarness.start(relay: { $0.limits.inspectionDelay = .milliseconds(300) })
        let client = try await harness.connected()
        let sent = CaptureTimestamp.now()
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("{\"n\":1}"))) }
        let answered = CaptureTimestamp.now()
        #expect(reply.body.readableBytes == 7, "forwarded without waiting for the inspection")

        let message = try await harness.recorder.first {
            if case .message(let message) = $0, message.message.type == .response { message } else { nil }
        }
        let time = try #require(message.time)
        #expect(sent <= time.wall && time.wall <= answered, "read between the request going out and the reply arriving")
        #expect(message.requestProfile == "echo" && message.roundTrip != nil)

        // The log line carries that time, to the microsecond.
        let collector = RelayLoggingTests.LineCollector(level: .info)
        let observer = LoggingObserver(logger: Logger(label: "test") { _ in collector })
        observer.observe(.message(message))
        let line = try #require(collector.all.first)
        var stamp = [UInt8](repeating: 0, count: LogTimestamp.length)
        stamp.withUnsafeMutableBufferPointer {
            LogTimestamp.write(seconds: Int(time.wall.seconds), microseconds: Int(time.wall.nanoseconds / 1000), to: $0.baseAddress!)
        }
        #expect(line.hasPrefix(String(decoding: stamp, as: UTF8.self)), "\(line)")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    @Test("every message of a burst is reported once, both directions in the order read, before the session's summary")
    func everyMessageOnce() async throws {
        let harness = try await RelayHarness.start(relay: { $0.limits.inspectionBatchFrames = 8 })
        let client = try await harness.connected()
        var pending: [EventLoopFuture<BLIPMessage>] = []
        for seq in 0..<50 { pending.append(try await client.send(.request(profile: "echo", properties: ["seq": "\(seq)"], body: body("x")))) }
        let sent = pending
        _ = try await withTimeout { try await replies(to: sent) }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        let events = harness.recorder.all
        let messages = events.compactMap { event -> MessageEvent? in if case .message(let m) = event { m } else { nil } }
        let requests = messages.filter { $0.direction == .clientToServer }.compactMap { $0.message.properties["seq"] }
        #expect(requests == (0..<50).map { "\($0)" })
        #expect(messages.filter { $0.direction == .serverToClient }.count == 50)
        let times = messages.compactMap { $0.time?.uptime }
        #expect(times.count == messages.count && times == times.sorted(), "reported in the order read")
        let closedAt = try #require(events.firstIndex { if case .sessionClosed = $0 { true } else { false } })
        let lastMessage = try #require(events.lastIndex { if case .message = $0 { true } else { false } })
        #expect(lastMessage < closedAt)
        try await harness.shutdown()
    }

    @Test("the start line says when frames are inspected: within 5 ms or at 64 frames / 256 KiB by default, as given, or each read")
    func startLine() async throws {
        for (flags, expected) in [([String](), "inspection: within 5 ms of a read, or at 64 frames or 256 KiB waiting"),
                                  (["--inspection-delay-ms", "2.5", "--inspection-batch", "16,64"],
                                   "inspection: within 2.5 ms of a read, or at 16 frames or 64 KiB waiting"),
                                  (["--inspection-delay-ms", "0"], "inspection: each read, right after it is forwarded")] {
            let relay = try RelayChild.start(flags)
            defer { relay.kill() }
            try await relay.waitForError(containing: expected)
        }
    }

    @Test("--inspection-delay-ms and --inspection-batch refuse values out of range before anything starts")
    func refusedOptions() async throws {
        for (option, value) in [("--inspection-delay-ms", "-1"), ("--inspection-delay-ms", "5000"),
                                ("--inspection-batch", "0"), ("--inspection-batch", "8,0"), ("--inspection-batch", "lots")] {
            let finished = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                              option, value], within: 30)
            #expect(finished.status != 0, "\(option) \(value)")
            #expect(finished.errors.contains(option), "\(option) \(value): \(finished.errors)")
        }
    }
}
