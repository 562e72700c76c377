import BLIPCore
import FuzzSupport
import Mediation
import NIOCore
import Replication

/// Replication messages as a peer sends them: a request of a profile the input picks (changes,
/// rev, proposeChanges, setCheckpoint, … or an unknown one) with the input's properties and
/// body, and a reply or error with the input's body, typed by ``ReplicationMessage`` (and
/// summarized), observed by a ``SessionAnalyzer``, and passed through the mediator's body
/// decision.
///
/// Input: the profile byte, a flags byte (bit 0: NoReply; bit 1: the reply is an ERR; bit 2:
/// the properties come from the input), a properties block (`len16 || key\0value\0…`), the
/// request body (`len16 || bytes`), then the reply body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let profiles = ["changes", "rev", "proposeChanges", "setCheckpoint", "getCheckpoint", "subChanges",
                    "unsubChanges", "norev", "getAttachment", "proveAttachment", "getRev", "putRev",
                    "getCollections", "PING", "echo"]
    let profile = profiles[Int(input.byte()) % profiles.count]
    let flags = input.byte()
    let block = input.record()
    let requestBody = input.record()
    let replyBody = input.rest()

    var properties: Properties = [
        "id": "doc-1", "rev": "2-abc", "sequence": "7", "history": "1-aaa,1-bbb", "client": "cp-1",
        "since": "0", "continuous": "true", "digest": "sha1-x", "docID": "doc-1", "collection": "0",
    ]
    if flags & 4 != 0, let decoded = try? Properties.decode(block: ByteBuffer(fuzzBytes: block)) {
        properties = decoded
    }
    properties["Profile"] = profile
    let request = BLIPMessage(type: .request, number: 1,
                              flags: FrameFlags(type: .request, noReply: flags & 1 != 0),
                              properties: properties, body: ByteBuffer(fuzzBytes: requestBody))
    let reply: BLIPMessage
    if flags & 2 != 0 {
        reply = BLIPMessage(type: .error, number: 1, properties: ["Error-Domain": "HTTP", "Error-Code": "404"],
                            body: ByteBuffer(fuzzBytes: replyBody))
    } else {
        reply = BLIPMessage(type: .response, number: 1, properties: [:], body: ByteBuffer(fuzzBytes: replyBody))
    }

    let typedRequest = ReplicationMessage(request)
    let typedReply = ReplicationMessage(reply, answering: typedRequest)
    for typed in [typedRequest, typedReply] {
        // The relay's log writes summaries in: measured in a buffer too small, then written whole.
        let summary = typed.summary
        var small = [UInt8](repeating: 0, count: 8)
        let length = small.withUnsafeMutableBufferPointer { typed.writeSummary(into: $0) }
        fuzzCheck(length == summary.utf8.count, "writeSummary measured another length than summary has")
        var room = [UInt8](repeating: 0, count: length)
        _ = room.withUnsafeMutableBufferPointer { typed.writeSummary(into: $0) }
        fuzzCheck(String(decoding: room, as: UTF8.self) == summary, "writeSummary wrote another line than summary")
    }
    fuzzCheck(typedReply.profile == typedRequest.profile, "the reply lost its request's profile")

    let analyzer = SessionAnalyzer()
    analyzer.observeHandshake(subprotocol: "BLIP_3+CBMobile_3", user: "fuzz", at: 0)
    _ = analyzer.observe(message: request, from: .clientToServer, at: 0.5)
    if flags & 1 == 0 {
        _ = analyzer.observe(message: reply, from: .serverToClient, at: 1)
    }
    _ = analyzer.summary()
    _ = analyzer.stuckFindings(now: 1000)
    _ = analyzer.timeline(docID: "doc-1")

    _ = ChangesFilter.decision(for: request, rule: "fuzz") { $0.utf8.count % 2 == 0 }
    return 0
}
