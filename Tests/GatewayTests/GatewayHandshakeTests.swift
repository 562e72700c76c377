import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import NIOCore
import Testing

/// The gateway's HTTP side: sub-protocol choice and Basic auth, as Sync Gateway answers them.
@Suite struct GatewayHandshakeTests {
    @Test func theClientsPreferenceWins() async throws {
        try await withGateway { gateway in
            let outcome = try await gateway.dial(subprotocols: ["BLIP_3+CBMobile_2", "BLIP_3+CBMobile_3"])
            let connection = try #require(outcome.connection)
            #expect(connection.subprotocol == "BLIP_3+CBMobile_2")
            try await connection.close()
        }
    }

    @Test func liteCore4GetsCBMobile4() async throws {
        try await withGateway { gateway in
            // What a LiteCore 4 database with version vectors offers when it pushes.
            let outcome = try await gateway.dial(subprotocols: ["BLIP_3+CBMobile_4"])
            let connection = try #require(outcome.connection)
            #expect(connection.subprotocol == "BLIP_3+CBMobile_4")
            try await connection.close()
            let both = try #require(try await gateway.dial(subprotocols: ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"]).connection)
            #expect(both.subprotocol == "BLIP_3+CBMobile_4")
            try await both.close()
        }
    }

    @Test func noCommonSubprotocolIsRefusedWith500() async throws {
        try await withGateway { gateway in
            let outcome = try await gateway.dial(subprotocols: ["BLIP_3+CBMobile_5"])
            guard case .refused(let status, _, let body) = outcome else {
                Issue.record("expected a refusal")
                return
            }
            #expect(status == .internalServerError)
            #expect(body == "I only speak BLIP_3+CBMobile_4,BLIP_3+CBMobile_3,BLIP_3+CBMobile_2 protocols")
            let replicator = gateway.replicator(.pull, into: GatewayDatabase(name: "l")) {
                $0.subprotocols = ["BLIP_3+CBMobile_5"]
            }
            await #expect(throws: GatewayError.self) { _ = try await replicator.run() }
        }
    }

    @Test func unknownDatabaseIs404() async throws {
        try await withGateway { gateway in
            let outcome = try await gateway.dial(path: "/nope/_blipsync")
            guard case .refused(let status, _, _) = outcome else {
                Issue.record("expected a refusal")
                return
            }
            #expect(status == .notFound)
        }
    }

    @Test func basicAuthChallengesThenAdmits() async throws {
        try await withGateway(configure: { $0.users = ["alice": "secret"] }) { gateway in
            guard case .refused(let status, let headers, _) = try await gateway.dial() else {
                Issue.record("expected a 401")
                return
            }
            #expect(status == .unauthorized)
            #expect(headers.first(name: "WWW-Authenticate") == "Basic realm=\"Couchbase Sync Gateway\"")

            let anonymous = gateway.replicator(.pull, into: GatewayDatabase(name: "l"))
            let refusal = await #expect(throws: GatewayError.self) { _ = try await anonymous.run() }
            #expect(refusal?.status == 401)
            let wrong = gateway.replicator(.pull, into: GatewayDatabase(name: "l")) {
                $0.username = "alice"
                $0.password = "guess"
            }
            let wrongRefusal = await #expect(throws: GatewayError.self) { _ = try await wrong.run() }
            #expect(wrongRefusal?.status == 401)
            let right = gateway.replicator(.pull, into: GatewayDatabase(name: "l")) {
                $0.username = "alice"
                $0.password = "secret"
            }
            _ = try await right.run()
        }
    }
}
