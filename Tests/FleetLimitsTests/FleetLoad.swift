import BLIPCore
import BLIPNIO
import Foundation
import Policy

/// Clients of several users, spread over the relays, each sending `getCheckpoint` requests on
/// four concurrent lanes, one at a time each, paced (so that a machine slowed by the rest of the
/// suite still offers well over the limit while a quiet one is not flooded): what each user, and
/// each user on each relay, had admitted (any answer but the relay's 429) among the requests
/// sent within a window of the policy's clock.
struct FleetLoad {
    struct Client: Sendable {
        var user: String
        var relay: Int
        var connection: BLIPConnection
    }

    struct Counts: Sendable {
        var perUser: [String: Int] = [:]
        var perUserAndRelay: [String: Int] = [:]
        /// Nanoseconds of the policy's clock the window lasted.
        var elapsed: UInt64

        func rate(_ user: String) -> Double { Double(perUser[user, default: 0]) / (Double(elapsed) / 1e9) }
    }

    /// Requests answered by neither side within this long fail the run (no request may hang).
    static let replyTimeout: Duration = .seconds(30)

    static func connect(_ fixture: FleetFixture, users: [String]) async throws -> [Client] {
        var clients: [Client] = []
        for user in users {
            for relay in fixture.members.indices {
                let (connection, status) = try await fixture.connect(user: user, relay: relay)
                guard let connection else { throw LoadFailure("\(user) refused by relay \(relay): \(String(describing: status))") }
                clients.append(Client(user: user, relay: relay, connection: connection))
            }
        }
        return clients
    }

    /// Runs every client from now; counts the requests sent between `warmUp` from now and
    /// `warmUp + window` later.
    static func run(_ clients: [Client], warmUp: Duration = .milliseconds(500), window: Duration,
                    pace: Duration = .milliseconds(20), lanes: Int = 4) async throws -> Counts {
        let from = PolicyClock.now() + UInt64(warmUp.components.seconds) * 1_000_000_000 + UInt64(warmUp.components.attoseconds / 1_000_000_000)
        let until = from + UInt64(window.components.seconds) * 1_000_000_000 + UInt64(window.components.attoseconds / 1_000_000_000)
        let counted = try await withThrowingTaskGroup(of: (Client, Int).self) { group in
            for client in clients {
                for _ in 0..<lanes { group.addTask {
                    var admitted = 0
                    var index = 0
                    while true {
                        let sent = PolicyClock.now()
                        if sent >= until { break }
                        index += 1
                        let request = BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "load-\(client.user)-\(index)"])
                        let reply = try await withReplyTimeout { try await client.connection.request(request) }
                        let limited = reply.type == .error && reply.properties["Error-Code"] == "429"
                        if !limited, sent >= from { admitted += 1 }
                        try await Task.sleep(for: pace)
                    }
                    return (client, admitted)
                } }
            }
            var all: [(Client, Int)] = []
            for try await result in group { all.append(result) }
            return all
        }
        var counts = Counts(elapsed: until - from)
        for (client, admitted) in counted {
            counts.perUser[client.user, default: 0] += admitted
            counts.perUserAndRelay["\(client.user)@\(client.relay)", default: 0] += admitted
        }
        return counts
    }

    static func withReplyTimeout<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: replyTimeout)
                throw LoadFailure("a request got no answer within \(replyTimeout)")
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }

    static func close(_ clients: [Client]) async {
        for client in clients { try? await client.connection.close() }
    }
}

struct LoadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
