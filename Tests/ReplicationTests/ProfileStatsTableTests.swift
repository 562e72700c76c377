import Testing
@testable import Replication

@Suite("Profile stats table")
struct ProfileStatsTableTests {
    @Test("a profile keeps its slot; known and unknown, none and the cap's (other)")
    func slots() {
        var table = ProfileStatsTable(maxProfiles: 4)
        let rev = table.slot(profile: "rev", known: .rev)
        let echo = table.slot(profile: "echo", known: nil)
        let none = table.slot(profile: nil, known: nil)
        #expect(Set([rev, echo, none]).count == 3)
        #expect(table.slot(profile: "rev", known: .rev) == rev)
        #expect(table.slot(profile: "echo", known: nil) == echo)
        #expect(table.slot(profile: "(none)", known: nil) == none)
        let fourth = table.slot(profile: "a", known: nil)
        // Full: new profiles, known or not, share (other), which a peer may also name.
        let other = table.slot(profile: "b", known: nil)
        #expect(table.slot(profile: "PING", known: .ping) == other)
        #expect(table.slot(profile: "(other)", known: nil) == other)
        #expect(table.slot(profile: "a", known: nil) == fourth && table.slot(profile: "echo", known: nil) == echo)
        table.update(other) { $0.requests += 2 }
        #expect(table.sorted.map(\.profile) == ["(none)", "(other)", "a", "echo", "rev"])
        #expect(table.sorted.map(\.requests) == [0, 2, 0, 0, 0])
    }
}
