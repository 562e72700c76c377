import BLIPCore
import Foundation
import NIOHTTP1
import Testing
@testable import Relay

/// The admin listener shows who a session belongs to, never with what: no credential from the
/// upgrade request (header, cookie, query) or from BLIP properties reaches /sessions or /metrics.
@Suite struct AdminSecretsTests {
    static let marker = "s3cr3tv4lue"

    /// Credentials of every shape a client may send: a cookie without a name, Basic credentials
    /// without a user:password colon, a token in the query, secret BLIP properties.
    @Test(arguments: [
        ["Cookie": "ck-\(marker)"],
        ["Authorization": "Basic " + Array("tok-\(marker)".utf8).base64],
        ["Authorization": "Bearer tok-\(marker)", "Cookie": "SyncGatewaySession=ck-\(marker)"],
    ])
    func adminShowsNoSecrets(headers: [String: String]) async throws {
        let fixture = try await MetricsFixture.start()
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        let outcome = try await fixture.harness.connect(path: "/db/_blipsync?token=qs-\(Self.marker)", headers: fields)
        let client = try #require(outcome.connection)
        _ = try await withTimeout {
            try await client.request(.request(profile: "login", properties: ["Authorization": "Bearer p-\(Self.marker)",
                                                                            "password": "pw-\(Self.marker)"]))
        }
        let id = try #require(fixture.observer.liveTracks().first?.info.id)
        for path in ["/sessions", "/sessions/\(id)", "/metrics"] {
            let (status, body) = try await fixture.get(path)
            #expect(status == 200)
            #expect(!body.contains(Self.marker), "\(path) shows a secret:\n\(body)")
        }
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        try await fixture.shutdown()
    }
}

extension Array where Element == UInt8 {
    fileprivate var base64: String { Data(self).base64EncodedString() }
}
