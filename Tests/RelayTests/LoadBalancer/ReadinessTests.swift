import Testing
@testable import Relay

@Suite("readiness: /readyz's answer")
struct ReadinessTests {
    @Test("ready only when listening and not draining; each failing condition gives its reason, one a line")
    func conditions() {
        let ready = Readiness(listening: true, draining: false)
        #expect(ready.isReady && ready.text == "ok\n")
        let draining = Readiness(listening: true, draining: true)
        #expect(!draining.isReady && draining.reasons == [.draining])
        #expect(draining.text == "relay draining: no new session is accepted\n")
        var both = Readiness(listening: false, draining: true)
        both.fail(.upstream("route default: no node up (sg:4984 down)"))
        #expect(both.reasons == [.notListening, .draining, .upstream("route default: no node up (sg:4984 down)")])
        #expect(both.text.split(separator: "\n") == ["relay not listening", "relay draining: no new session is accepted",
                                                      "route default: no node up (sg:4984 down)"])
    }
}
