import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// A session's ``SessionReadGate`` (what a capture uses for back-pressure) acts on its session
/// while it runs and lets go of it when it finishes: a recorder may keep the gate, the session is
/// freed all the same, and a hold after the end does nothing.
@Suite struct RelayReadGateTests {
    /// Keeps every gate the relay hands it, as a capture does for the life of its file.
    final class GateKeeper: RelayRecorder, @unchecked Sendable {
        let interests: RelayEventInterests = [.sessions]
        let gates = NIOLockedValueBox<[SessionReadGate]>([])
        func prepare() throws {}
        func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
            if let readGate { gates.withLockedValue { $0.append(readGate) } }
            return nil
        }
        func observe(_ event: RelayEvent) {}
        func finish() async {}
    }

    /// A weak reference from the test, taken on the session's loop.
    final class WeakSession: @unchecked Sendable { weak var session: RelaySession? }

    @Test func aKeptGateLetsItsFinishedSessionGo() async throws {
        let keeper = GateKeeper()
        let harness = try await RelayHarness.start(observers: [keeper])
        let client = try await harness.connected()
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: ByteBuffer(string: "ping"))) }
        #expect(String(buffer: reply.body) == "ping")
        let gate = try #require(keeper.gates.withLockedValue { $0.first })
        // While the session runs, the gate acts on it.
        let watched = WeakSession()
        let eventLoop = gate.eventLoop
        try await eventLoop.submit { watched.session = gate.target }.get()
        #expect(try await eventLoop.submit { watched.session != nil }.get())

        try await client.close()
        _ = try await harness.recorder.first { if case .sessionClosed = $0 { true } else { false } }
        // The core reports the close and finishes the session in one turn of its loop, so the
        // next task on that loop sees it finished: the gate has let go, and holding does nothing.
        #expect(try await eventLoop.submit { gate.target == nil }.get())
        gate.hold()
        gate.release()
        #expect(try await eventLoop.submit { gate.target == nil }.get())
        // Once the relay and its loops are down (the client channel's close handlers have run),
        // nothing holds the session, though the recorder still keeps its gate.
        try await harness.shutdown()
        #expect(watched.session == nil)
        #expect(keeper.gates.withLockedValue { $0.count } == 1)
    }
}
