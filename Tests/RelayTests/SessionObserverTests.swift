import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
@testable import Relay

/// Each observer is asked once per session for that session's handler, as the session opens; the
/// session's events then go to that handler on the session's event loop, and none of them to the
/// observer itself: nothing looks the session up per message.
@Suite struct SessionObserverTests {
    /// Counts what reached it: handlers made, events per handler, events given to itself.
    final class CountingObserver: RelayObserver, @unchecked Sendable {
        let interests: RelayEventInterests = [.sessions, .messages, .frames]
        private let lock = NIOLock()
        private(set) var opened: [UInt64] = []
        private(set) var relayWide: [String] = []
        private(set) var handlers: [Handler] = []

        final class Handler: SessionObserver {
            let session: UInt64
            let loop: EventLoop
            private(set) var events: [String] = []
            private(set) var offLoop = 0

            init(session: UInt64, loop: EventLoop) {
                self.session = session
                self.loop = loop
            }

            func observe(_ event: RelayEvent) {
                if !loop.inEventLoop { offLoop += 1 }
                switch event {
                case .sessionOpened: events.append("opened")
                case .message(let message): events.append("\(message.direction == .clientToServer ? "C" : "U") \(message.message.type)")
                case .sessionClosed: events.append("closed")
                default: break
                }
            }
        }

        func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
            let handler = Handler(session: info.id, loop: MultiThreadedEventLoopGroup.currentEventLoop!)
            lock.withLock {
                opened.append(info.id)
                handlers.append(handler)
            }
            return handler
        }

        func observe(_ event: RelayEvent) {
            if case .handshakeRefused = event { return }  // no session: relay-wide by nature
            lock.withLock { relayWide.append("\(event)") }
        }

        var snapshot: (opened: [UInt64], relayWide: [String], handlers: [Handler]) { lock.withLock { (opened, relayWide, handlers) } }
    }

    @Test func aSessionsEventsGoToTheHandlerItsObserverMadeForItAtOpen() async throws {
        let counting = CountingObserver()
        let harness = try await RelayHarness.start(observers: [counting])
        var closed: Set<UInt64> = []
        for _ in 0..<2 {
            let client = try await harness.connected()
            for index in 0..<5 {
                _ = try await withTimeout { try await client.request(.request(profile: "echo", body: ByteBuffer(string: "m\(index)"))) }
            }
            try await client.close()
            let earlier = closed
            closed.insert(try await harness.recorder.first(extracting: { event -> UInt64? in
                if case .sessionClosed(let summary) = event, !earlier.contains(summary.info.id) { summary.info.id } else { nil }
            }))
        }
        try await harness.shutdown()
        let seen = counting.snapshot
        #expect(seen.opened.count == 2 && Set(seen.opened).count == 2, "one handler per session: \(seen.opened)")
        #expect(seen.relayWide.isEmpty, "no session event reached the observer itself: \(seen.relayWide)")
        for handler in seen.handlers {
            #expect(handler.events.first == "opened" && handler.events.last == "closed", "\(handler.events)")
            #expect(handler.events.filter { $0 == "C MSG" }.count == 5 && handler.events.filter { $0 == "U RPY" }.count == 5,
                    "\(handler.events)")
            #expect(handler.offLoop == 0, "every event on the session's event loop")
        }
    }
}
