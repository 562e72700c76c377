import Testing
@testable import Replication

@Suite("Revision IDs and histories (§4)")
struct RevIDTests {
    @Test("rev-tree IDs: generation-digest with 32 to 40 hex digits",
          arguments: [("1-00000000000000000000000000000001", true), ("3-a1b2c3d4e5f60718293a4b5c6d7e8f9001234567", true),
                      ("0-00000000000000000000000000000001", false), ("1-abc", false), ("x-00000000000000000000000000000001", false),
                      ("1-0000000000000000000000000000000g", false), ("100000000000000000000000000000001", false)])
    func treeIDs(_ text: String, _ valid: Bool) {
        #expect(((try? TreeRevID.parse(text).get()) != nil) == valid)
    }

    @Test("versions: hextime@ then 22 base64 characters",
          arguments: [("17f3c2a1b0e9d800@AbCdEfGhIjKlMnOpQrStUv", true), ("1@AAAAAAAAAAAAAAAAAAAA+/", true),
                      ("17f3c2a1b0e9d8001@AbCdEfGhIjKlMnOpQrStUv", false), ("xyz@AbCdEfGhIjKlMnOpQrStUv", false),
                      ("1@short", false), ("1-AbCdEfGhIjKlMnOpQrStUv", false)])
    func versions(_ text: String, _ valid: Bool) {
        #expect(((try? Version.parse(Substring(text)).get()) != nil) == valid)
    }

    @Test("a rev-tree history decreases by one from the current generation")
    func treeHistory() throws {
        let current = try RevID.parse(revA3).get()
        let good = RevisionHistory.parse("\(revA2), \(revA1)", current: current)
        #expect((try? good.get())?.count == 2)
        let gap = RevisionHistory.parse(revA1, current: current)
        #expect(throws: ReplicationError.self) { try gap.get() }
    }

    @Test("a version-vector history: merge versions before ';', history after")
    func vectorHistory() throws {
        let current = try RevID.parse("a0@AAAAAAAAAAAAAAAAAAAAAA").get()
        let text = "9f@BBBBBBBBBBBBBBBBBBBBBB, 9e@CCCCCCCCCCCCCCCCCCCCCC; 90@DDDDDDDDDDDDDDDDDDDDDD"
        guard case .vector(let vector) = try RevisionHistory.parse(text, current: current).get() else {
            Issue.record("expected a vector")
            return
        }
        #expect(vector.merges.count == 2 && vector.history.count == 1)
        let duplicate = "9f@BBBBBBBBBBBBBBBBBBBBBB, 9e@BBBBBBBBBBBBBBBBBBBBBB"
        #expect(throws: ReplicationError.self) { try RevisionHistory.parse(duplicate, current: current).get() }
    }
}
