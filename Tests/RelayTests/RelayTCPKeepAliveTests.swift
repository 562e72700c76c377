import BLIPNIO
import Foundation
import NIOCore
import Testing
@testable import Relay

/// Both legs of a session run TCP keepalive, so a peer that vanishes without FIN or RST is found
/// by the kernel in about a minute and a half rather than at the 900 s idle timeout. Read from
/// the kernel's own socket table: an idle ESTABLISHED socket with keepalive on has its keepalive
/// timer (`tr` 2) armed; the test's client, which set nothing, has none.
@Suite struct RelayTCPKeepAliveTests {
    /// `/proc/net/tcp` rows: local port, remote port, state, timer kind.
    static func sockets() throws -> [(local: Int, remote: Int, state: String, timer: String)] {
        // Read to the end in a loop: procfs files report size 0, and one read returns one page.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/net/tcp"))
        defer { try? handle.close() }
        var data = Data()
        while let chunk = try handle.read(upToCount: 65_536), !chunk.isEmpty { data.append(chunk) }
        let table = String(decoding: data, as: UTF8.self)
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 5, let local = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                  let remote = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { return nil }
            return (local, remote, String(fields[3]), String(fields[5].split(separator: ":").first ?? ""))
        }
    }

    @Test func bothLegsKeepAliveAndTheTestClientDoesNot() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await harness.upstream()
        let relayPort = harness.relayAddress.port!, upstreamPort = harness.upstream.localAddress.port!
        // A socket with a segment not yet acknowledged shows the retransmit timer (`tr` 1) instead:
        // the table is read again (bounded) until every leg is idle.
        var legs: (client: String, upstream: String, test: String)?
        let deadline = Date().addingTimeInterval(30)
        repeat {
            let table = try Self.sockets().filter { $0.state == "01" }
            let clientLeg = try #require(table.first { $0.local == relayPort })
            let upstreamLeg = try #require(table.first { $0.remote == upstreamPort })
            let testClient = try #require(table.first { $0.remote == relayPort })
            legs = (clientLeg.timer, upstreamLeg.timer, testClient.timer)
            if ![clientLeg, upstreamLeg, testClient].contains(where: { $0.timer == "01" }) { break }
            try await Task.sleep(for: .milliseconds(20))  // no event tells when the kernel's ACK arrives
        } while Date() < deadline
        let (clientLeg, upstreamLeg, testClient) = try #require(legs)
        #expect(clientLeg == "02", "the relay's accepted socket has its keepalive timer armed")
        #expect(upstreamLeg == "02", "the relay's upstream socket has its keepalive timer armed")
        #expect(testClient == "00", "a socket without keepalive has no timer")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }
}
