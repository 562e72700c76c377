import BLIPCore
import NIOCore
import Testing
@testable import Replication

/// Couchbase Lite 3.x keeps attachments as blob dictionaries nested anywhere in a document; older
/// peers use `_attachments`. Both are attachments a peer may ask for by digest.
@Suite("Document blobs")
struct DocumentBlobsTests {
    static let liteCoreDoc = #"""
        {"name":"Ann","avatar":{"@type":"blob","digest":"sha1-AAA=","length":5242880,"content_type":"image/png"},
         "album":[{"@type":"blob","digest":"sha1-BBB=","length":12,"content_type":"video/mp4"},{"title":"x"}],
         "notBlob":{"@type":"other","digest":"sha1-CCC="}}
        """#

    @Test("blobs nested anywhere are found with their paths, content types and lengths")
    func nestedBlobs() throws {
        let body = try #require(JSONValue(parsing: ByteBuffer(string: Self.liteCoreDoc)))
        let references = DocumentBlobs.references(in: body)
        #expect(references.map(\.name) == ["album[0]", "avatar"])
        #expect(references.map(\.digest) == ["sha1-BBB=", "sha1-AAA="])
        #expect(references.map(\.contentType) == ["video/mp4", "image/png"])
        #expect(references.map(\.length) == [12, 5_242_880])
    }

    @Test("a blob also listed in _attachments counts once, as its _attachments entry")
    func bothForms() throws {
        let text = #"{"_attachments":{"blob_/photo":{"digest":"sha1-AAA=","length":5,"stub":true,"content_type":"image/png"}},"#
            + #""photo":{"@type":"blob","digest":"sha1-AAA=","length":5,"content_type":"image/png"}}"#
        let body = try #require(JSONValue(parsing: ByteBuffer(string: text)))
        #expect(DocumentBlobs.references(in: body).map(\.name) == ["blob_/photo"])
    }

    @Test("a rev whose body holds blobs lists them as its attachments")
    func revListsBlobs() {
        let typed = ReplicationMessage(request("rev", 1, [("id", "ann"), ("rev", "1-" + String(repeating: "a", count: 40))],
                                               body: Self.liteCoreDoc))
        guard case .rev(let rev) = typed.content else { return #expect(Bool(false)) }
        #expect(rev.attachments.map(\.digest) == ["sha1-BBB=", "sha1-AAA="])
        #expect(typed.violations.isEmpty)
    }
}
