import BLIPCore
import NIOCore
import Replication
import Testing

/// ``ReplicationMessage/readsBody(of:profile:answering:)`` tells a receiver, once a message's
/// properties are in, whether the replication reading will need its body. Where it says no, the
/// reading of a message whose body was only counted (``BLIPMessage/unkeptBodyBytes``) must be the
/// reading of the whole message.
@Suite("Which bodies the replication reading needs")
struct BodyReadingTests {
    static let body = #"{"_id":"doc1","_rev":"2-abc","x":[1,2,3]}"#

    /// `message` as a decoder that did not keep its body delivers it.
    static func unkept(_ message: BLIPMessage) -> BLIPMessage {
        var counted = message
        counted.unkeptBodyBytes = message.body.readableBytes
        counted.body = ByteBuffer()
        return counted
    }

    static func request(_ profile: String?) -> BLIPMessage {
        var request = BLIPMessage.request(profile: profile, properties: ["id": "doc1", "rev": "2-abc", "client": "c1"],
                                          body: ByteBuffer(string: body))
        request.number = 1
        return request
    }

    static let profiles: [String?] = ReplicationProfile.allCases.map(\.rawValue) + ["echo", nil]

    @Test("requests: every known profile is read, an unknown profile is typed from its size alone")
    func requests() {
        for profile in Self.profiles {
            let known = profile.flatMap(ReplicationProfile.init(rawValue:))
            let reads = ReplicationMessage.readsBody(of: .request, profile: known, answering: nil)
            #expect(reads == (known != nil), "\(profile ?? "no profile")")
            guard !reads else { continue }
            let whole = ReplicationMessage(Self.request(profile)), counted = ReplicationMessage(Self.unkept(Self.request(profile)))
            #expect(whole.content == counted.content && whole.bodyBytes == counted.bodyBytes && counted.bodyBytes > 0)
        }
    }

    @Test("replies: read for the profiles whose answers carry content, typed alike from the size for every other")
    func replies() {
        let read: Set<ReplicationProfile> = [.getCheckpoint, .setCheckpoint, .getCollections, .changes, .proposeChanges,
                                             .proveAttachment, .getRev]
        for profile in Self.profiles {
            let known = profile.flatMap(ReplicationProfile.init(rawValue:))
            let reads = ReplicationMessage.readsBody(of: .response, profile: nil, answering: known)
            #expect(reads == known.map(read.contains) ?? false, "reply to \(profile ?? "no profile")")
            guard !reads else { continue }
            let request = Self.request(profile)
            let typedRequest = ReplicationMessage(request)
            let reply = BLIPMessage.reply(to: request, body: ByteBuffer(string: Self.body))
            let whole = ReplicationMessage(reply, answering: typedRequest)
            let counted = ReplicationMessage(Self.unkept(reply), answering: typedRequest)
            #expect(whole.content == counted.content, "reply to \(profile ?? "no profile")")
            #expect(whole.bodyBytes == counted.bodyBytes && counted.bodyBytes == Self.body.utf8.count)
            #expect(whole.violations.isEmpty == counted.violations.isEmpty)
        }
    }

    @Test("an error reply is always read")
    func errors() {
        #expect(ReplicationMessage.readsBody(of: .error, profile: nil, answering: nil))
        #expect(ReplicationMessage.readsBody(of: .error, profile: nil, answering: .getAttachment))
    }

    @Test("a getAttachment reply not kept is still the attachment's size")
    func attachmentSize() {
        let request = Self.request("getAttachment")
        let reply = BLIPMessage.reply(to: request, body: ByteBuffer(repeating: 7, count: 5_000))
        let counted = ReplicationMessage(Self.unkept(reply), answering: ReplicationMessage(request))
        #expect(counted.content == .attachment(bytes: 5_000))
    }
}
