import BLIPCore
import Foundation
import NIOCore
import Replay
import Replication
import Testing

/// What a replay sends differently from the recording.
@Suite struct ReplaySubstitutionsTests {
    @Test func checkpointClientIDIsReplacedEverywhereItAppears() {
        let substitutions = ReplaySubstitutions(clientID: "cp-new")
        let get = substitutions.apply(to: .request(profile: "getCheckpoint", properties: ["client": "cp-old"]))
        #expect(get.properties["client"] == "cp-new")
        let set = substitutions.apply(to: .request(profile: "setCheckpoint", properties: ["client": "cp-old", "rev": "0-1"],
                                                   body: ByteBuffer(string: #"{"remote":5}"#)))
        #expect(set.properties["client"] == "cp-new" && set.properties["rev"] == "0-1")
        #expect(String(buffer: set.body) == #"{"remote":5}"#)
        let collections = substitutions.apply(to: .request(profile: "getCollections", body: ByteBuffer(
            string: #"{"checkpoint_ids":["a","b"],"collections":["x.y","x.z"]}"#)))
        #expect(JSONValue(parsing: collections.body) == JSONValue(parsing: ByteBuffer(
            string: #"{"checkpoint_ids":["cp-new","cp-new"],"collections":["x.y","x.z"]}"#)))
        let rev = substitutions.apply(to: .request(profile: "rev", properties: ["client": "keep"]))
        #expect(rev.properties["client"] == "keep")
    }

    @Test func sinceIsReplacedOnlyInSubChanges() {
        let substitutions = ReplaySubstitutions(since: "42")
        #expect(substitutions.apply(to: .request(profile: "subChanges", properties: ["since": "7"])).properties["since"] == "42")
        #expect(substitutions.apply(to: .request(profile: "changes", properties: ["since": "7"])).properties["since"] == "7")
    }

    @Test func credentialsReplaceTheRecordedAuthorizationAndRedactedValuesAreDropped() {
        let recorded: [(name: String, value: String)] = [
            ("Host", "10.0.0.2:4984"), ("Sec-WebSocket-Key", "abc"), ("Sec-WebSocket-Protocol", "BLIP_3+CBMobile_3"),
            ("Authorization", "Basic <redacted>"), ("Cookie", "SyncGatewaySession=<redacted>"), ("User-Agent", "CBL/3.1"),
        ]
        let untouched = ReplaySubstitutions().handshakeHeaders(recorded: recorded)
        #expect(untouched.map(\.name) == ["User-Agent"])
        var substitutions = ReplaySubstitutions()
        substitutions.setCredentials(user: "alice", password: "secret")
        substitutions.setHeader(name: "user-agent", value: "replay")
        let headers = substitutions.handshakeHeaders(recorded: recorded)
        #expect(headers.map(\.name) == ["Authorization", "user-agent"])
        #expect(headers.first?.value == "Basic " + Data("alice:secret".utf8).base64EncodedString())
    }
}
