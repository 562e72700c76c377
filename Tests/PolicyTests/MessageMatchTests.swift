import BLIPCore
import Testing
@testable import Policy

@Suite("Message rules: matching each key")
struct MessageMatchTests {
    static let alice = SessionFacts(id: 1, user: "alice", clientIP: "10.1.2.3", database: "db")
    static let anonymousV6 = SessionFacts(id: 2, user: nil, clientIP: "2001:db8::7", database: "db")

    static func rule(_ match: String) throws -> MessageMatch {
        try PolicyDocument(yaml: "rules: [{ name: r, match: \(match), action: { deny: {} } }]").rules[0].match
    }

    static func rev(_ id: String, from direction: BLIPDirection = .clientToServer, extra: [(String, String)] = [],
                    bodySize: Int? = nil, attachments: [AttachmentFacts]? = nil) -> MessageFacts {
        MessageFacts(direction: direction, type: .request, number: 7,
                     properties: Properties([("Profile", "rev"), ("id", id), ("rev", "2-abc")] + extra),
                     collection: "inventory.parts", bodySize: bodySize, attachments: attachments)
    }

    func matches(_ match: MessageMatch, _ message: MessageFacts, _ session: SessionFacts = alice) -> Bool {
        match.matchesHead(message, session: session) && (!match.needsBody || match.matchesBody(message))
    }

    @Test("from, type and profile")
    func sideTypeProfile() throws {
        let match = try Self.rule("{ from: client, type: request, profile: [rev, norev] }")
        #expect(matches(match, Self.rev("d")))
        #expect(!matches(match, Self.rev("d", from: .serverToClient)))
        let reply = MessageFacts(direction: .clientToServer, type: .response, properties: [:])
        #expect(!matches(match, reply), "replies carry no profile")
        let changes = MessageFacts(direction: .clientToServer, type: .request, properties: ["Profile": "changes"])
        #expect(!matches(match, changes))
        let errors = try Self.rule("{ type: error }")
        #expect(matches(errors, MessageFacts(direction: .serverToClient, type: .error, properties: [:])))
        #expect(!matches(errors, reply))
    }

    @Test("doc: globs of every shape and re: regexes")
    func docPatterns() throws {
        let cases: [(String, [String], [String])] = [
            ("draft-*", ["draft-1", "draft-"], ["final-1", "xdraft-1"]),
            ("*-draft", ["a-draft"], ["a-draft2"]),
            ("*secret*", ["top-secret-doc", "secret"], ["public"]),
            ("order-??", ["order-12", "order-é1"], ["order-1", "order-123"]),
            ("a*b*c", ["abc", "a-b-c", "aXbYbZc"], ["acb", "ab"]),
            ("exact", ["exact"], ["exact1", "Exact"]),
            ("*", ["", "anything"], []),
            ("re:^user-[0-9]+$", ["user-1", "user-42"], ["user-", "xuser-1", "user-1a"]),
        ]
        for (pattern, yes, no) in cases {
            let match = try Self.rule("{ doc: \"\(pattern)\" }")
            for id in yes { #expect(matches(match, Self.rev(id)), "\(pattern) should match \(id)") }
            for id in no { #expect(!matches(match, Self.rev(id)), "\(pattern) should not match \(id)") }
        }
        let attachment = MessageFacts(direction: .clientToServer, type: .request,
                                      properties: ["Profile": "getAttachment", "docID": "draft-9", "digest": "sha1-x"])
        #expect(matches(try Self.rule("{ doc: \"draft-*\" }"), attachment), "getAttachment names its document docID")
        let noDoc = MessageFacts(direction: .clientToServer, type: .request, properties: ["Profile": "getCheckpoint"])
        #expect(!matches(try Self.rule("{ doc: \"*\" }"), noDoc))
    }

    @Test("collection, channel and properties")
    func propertyKeys() throws {
        #expect(matches(try Self.rule("{ collection: \"inventory.*\" }"), Self.rev("d")))
        #expect(!matches(try Self.rule("{ collection: \"_default._default\" }"), Self.rev("d")))
        let sub = MessageFacts(direction: .clientToServer, type: .request,
                               properties: ["Profile": "subChanges", "filter": "sync_gateway/bychannel", "channels": "public, team-a,team-b"])
        #expect(matches(try Self.rule("{ channel: \"team-*\" }"), sub))
        #expect(matches(try Self.rule("{ channel: public }"), sub))
        #expect(!matches(try Self.rule("{ channel: private }"), sub))
        #expect(!matches(try Self.rule("{ channel: public }"), Self.rev("d")), "no channels property")
        let props = try Self.rule("{ properties: { deleted: \"true\", rev: \"2-*\" } }")
        #expect(matches(props, Self.rev("d", extra: [("deleted", "true")])))
        #expect(!matches(props, Self.rev("d")), "a missing property does not match")
    }

    @Test("user and clientIP (CIDR, IPv4 and IPv6, mapped IPv4)")
    func sessionKeys() throws {
        let user = try Self.rule("{ user: \"re:^(alice|bob)$\" }")
        #expect(matches(user, Self.rev("d"), Self.alice))
        #expect(!matches(user, Self.rev("d"), Self.anonymousV6), "anonymous never matches a user")
        let v4 = try Self.rule("{ clientIP: \"10.0.0.0/8\" }")
        #expect(matches(v4, Self.rev("d"), Self.alice))
        #expect(matches(v4, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "::ffff:10.9.9.9")))
        #expect(!matches(v4, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "11.0.0.1")))
        #expect(!matches(v4, Self.rev("d"), Self.anonymousV6))
        let v6 = try Self.rule("{ clientIP: [\"192.168.0.1\", \"2001:db8::/32\"] }")
        #expect(matches(v6, Self.rev("d"), Self.anonymousV6))
        #expect(matches(v6, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "192.168.0.1")))
        #expect(!matches(v6, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "192.168.0.2")))
        #expect(!matches(v6, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "2001:db9::1")))
        #expect(!matches(v6, Self.rev("d"), SessionFacts(id: 3, user: nil, clientIP: "not-an-ip")))
    }

    @Test("CIDR edges: /0, odd prefix lengths, host addresses")
    func cidrEdges() throws {
        let all = try #require(CIDRBlock("0.0.0.0/0"))
        #expect(all.contains(try #require(PolicyIPAddress("255.255.255.255"))))
        #expect(!all.contains(try #require(PolicyIPAddress("::1"))))
        let odd = try #require(CIDRBlock("10.0.0.128/25"))
        #expect(odd.contains(try #require(PolicyIPAddress("10.0.0.200"))))
        #expect(!odd.contains(try #require(PolicyIPAddress("10.0.0.127"))))
        let v6 = try #require(CIDRBlock("fd00::/72"))
        #expect(v6.contains(try #require(PolicyIPAddress("fd00::ff:1"))))
        #expect(!v6.contains(try #require(PolicyIPAddress("fd00:0:0:0:100::1"))))
        #expect(try #require(CIDRBlock("::1")).contains(try #require(PolicyIPAddress("::1"))))
        #expect(CIDRBlock("10.0.0.0/40") == nil)
        #expect(CIDRBlock("10.0.0/8") == nil)
    }

    @Test("body sizes and attachments need the complete message")
    func bodyKeys() throws {
        let sized = try Self.rule("{ minBodySize: 1KB, maxBodySize: 2KB }")
        #expect(sized.needsBody)
        #expect(matches(sized, Self.rev("d", bodySize: 1024)))
        #expect(matches(sized, Self.rev("d", bodySize: 2048)))
        #expect(!matches(sized, Self.rev("d", bodySize: 1023)))
        #expect(!matches(sized, Self.rev("d", bodySize: 2049)))
        let video = try Self.rule("{ attachment: { contentType: \"video/*\", minSize: 10MB } }")
        let big = AttachmentFacts(contentType: "video/mp4", length: 20 << 20)
        let small = AttachmentFacts(contentType: "video/mp4", length: 1 << 20)
        let image = AttachmentFacts(contentType: "image/png", length: 20 << 20)
        #expect(matches(video, Self.rev("d", bodySize: 100, attachments: [image, big])))
        #expect(!matches(video, Self.rev("d", bodySize: 100, attachments: [image, small])))
        #expect(!matches(video, Self.rev("d", bodySize: 100, attachments: nil)))
    }

    @Test("every given key must match")
    func allKeys() throws {
        let match = try Self.rule("{ from: client, profile: rev, doc: \"draft-*\", user: alice, clientIP: 10.0.0.0/8 }")
        #expect(matches(match, Self.rev("draft-1")))
        #expect(!matches(match, Self.rev("draft-1"), SessionFacts(id: 1, user: "bob", clientIP: "10.1.2.3")))
        #expect(!matches(match, Self.rev("draft-1"), SessionFacts(id: 1, user: "alice", clientIP: "127.0.0.1")))
        #expect(!matches(match, Self.rev("final")))
    }
}
