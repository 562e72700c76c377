import BLIPCore
import FuzzSupport
import Policy

/// A policy file: ``PolicyDocument/init(yaml:)`` (Yams, then every rule's keys, patterns,
/// CIDR blocks, actions and rates), and a policy that loads is put to work: its message rules
/// judge a few messages, its connection rules a few handshakes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let yaml = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let document: PolicyDocument
    do {
        document = try PolicyDocument(yaml: yaml)
    } catch {
        _ = error.description
        return 0
    }
    let engine = PolicyEngine(rules: document.rules)
    let session = SessionFacts(id: 1, user: "alice", clientIP: "10.1.2.3", database: "db",
                               subprotocol: "BLIP_3+CBMobile_3", tls: false)
    let messages = [
        MessageFacts(direction: .clientToServer, type: .request, number: 1,
                     properties: ["Profile": "rev", "id": "draft-1", "rev": "1-a"], bodySize: 120,
                     attachments: [AttachmentFacts(contentType: "image/png", length: 2048)]),
        MessageFacts(direction: .serverToClient, type: .request, number: 2,
                     properties: ["Profile": "changes"], collection: "inventory.items", bodySize: 10),
        MessageFacts(direction: .serverToClient, type: .response, number: 1, properties: [:], bodySize: 0,
                     requestProfile: "rev"),
    ]
    for (index, message) in messages.enumerated() {
        for now in [UInt64(0), 1_000_000_000, 60_000_000_000] {
            _ = engine.evaluate(message, session: session, now: now + UInt64(index))
        }
    }
    let connections = ConnectionPolicy(rules: document.connectionRules, defaultAllows: document.connectionDefaultAllows)
    for facts in [
        HandshakeFacts(clientIP: "10.1.2.3", user: "alice", database: "db", offeredSubprotocols: ["BLIP_3+CBMobile_3"], tls: false),
        HandshakeFacts(clientIP: "::1", user: nil, database: "other", offeredSubprotocols: [], tls: true),
    ] {
        _ = connections.admit(facts, now: 5)
        connections.sessionClosed(facts)
    }
    return 0
}
