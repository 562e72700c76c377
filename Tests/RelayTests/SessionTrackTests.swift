import BLIPCore
import CoreMetrics
import Metrics
import NIOCore
import Replication
import Testing
@testable import Relay

/// A session's track counts on the session's event loop without a lock and publishes what it
/// counted to the admin listener once per input of the session.
@Suite struct SessionTrackTests {
    static func track() -> SessionTrack {
        let info = SessionInfo(id: 7, client: ClientAddress(peer: try? SocketAddress(ipAddress: "127.0.0.1", port: 1)), user: "u", database: "db", target: "/db/_blipsync",
                               upstream: "ws://127.0.0.1:1", subprotocol: "BLIP_3+CBMobile_3")
        return SessionTrack(info: info, started: 0, wallClock: 0, analyzer: SessionAnalyzer(),
                            active: Meter(label: "test_active", dimensions: [], factory: NOOPMetricsHandler.instance),
                            userMessages: nil, userBytes: nil)
    }

    static func recent(_ number: UInt64) -> SessionTrack.Recent {
        .init(time: Double(number), direction: .clientToServer, type: .request, number: MessageNumber(number),
              profile: "rev", bytes: 10, latency: nil)
    }

    @Test("what a batch counted shows once the batch is published, in order")
    func countsShowAtTheEndOfTheInput() {
        let track = Self.track()
        track.countMessage(wireBytes: 10, Self.recent(1))
        track.countFrame(direction: 1, wireBytes: 5)
        #expect(track.snapshot().messages == [0, 0], "not yet published")
        track.publish()
        let shown = track.snapshot()
        #expect(shown.messages == [1, 0] && shown.bytes == [10, 5])
        #expect(shown.recent.map(\.number) == [1])
        track.publish()
        #expect(track.snapshot().messages == [1, 0], "publishing nothing new changes nothing")
    }

    @Test("a batch of more messages than the ring keeps publishes itself, and the ring keeps the newest")
    func aLongBatchStaysBounded() {
        let track = Self.track()
        let count = SessionTrack.recentCapacity * 2 + 5
        for number in 1...count { track.countMessage(wireBytes: 1, Self.recent(UInt64(number))) }
        #expect(track.snapshot().messages[0] == SessionTrack.recentCapacity * 2, "two full rings went without waiting")
        track.publish()
        let shown = track.snapshot()
        #expect(shown.messages[0] == count)
        #expect(shown.recent.map(\.number) == (count - SessionTrack.recentCapacity + 1...count).map { MessageNumber(UInt64($0)) })
    }
}
