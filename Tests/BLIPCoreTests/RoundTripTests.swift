import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

@Suite("Round trips and mutations")
struct RoundTripTests {
    static func randomMessage(_ random: inout SeededRandom) -> BLIPMessage {
        let sizes = [0, 1, 300, 4096, 16_374, 16_380, 40_000, 200_000]
        let size = sizes[Int(random.next() % UInt64(sizes.count))]
        var properties = Properties()
        for index in 0..<Int(random.next() % 4) {
            properties["k\(index)"] = String(repeating: "v", count: Int(random.next() % 40))
        }
        return .request(profile: "echo", properties: properties,
                        body: ByteBuffer(bytes: random.bytes(size, compressible: random.next() % 2 == 0)),
                        compressed: random.next() % 2 == 0, urgent: random.next() % 5 == 0,
                        noReply: random.next() % 4 == 0)
    }

    @Test("random messages → frames → messages, both ways, with replies and ACK flow control", arguments: [1, 2, 3, 4])
    func randomRoundTrip(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let pair = EndpointPair()
        var sent: [MessageNumber: BLIPMessage] = [:]
        for _ in 0..<40 {
            let message = Self.randomMessage(&random)
            sent[pair.client.send(request: message)] = message
        }
        var replies: [BLIPMessage] = []
        let (received, _) = try pair.pump(onServerMessage: { request in
            if !request.isNoReply {
                pair.server.send(reply: .reply(to: request, body: request.body, compressed: request.isCompressed))
            }
        }, onClientMessage: { replies.append($0) })
        #expect(received.count == 40)
        for message in received {
            let original = try #require(sent[message.number])
            #expect(message.properties == original.properties)
            #expect(message.body == original.body)
            #expect(message.flags.isCompressed == original.flags.isCompressed || original.body.readableBytes == 0)
            #expect(message.isUrgent == original.isUrgent && message.isNoReply == original.isNoReply)
        }
        #expect(replies.count == sent.values.filter { !$0.isNoReply }.count)
        for reply in replies { #expect(reply.body == sent[reply.number]?.body) }
        #expect(pair.client.outbound.messageCount == 0 && pair.server.outbound.messageCount == 0)
        #expect(pair.client.inbound.messagesInProgress == 0 && pair.server.inbound.messagesInProgress == 0)
    }

    @Test("flipped bytes and truncations of real frames give only BLIPError, never a crash or a hang", arguments: [11, 12, 13])
    func mutations(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let pair = EndpointPair()
        for _ in 0..<12 { pair.client.send(request: Self.randomMessage(&random)) }
        try pair.pump(onServerMessage: { request in
            if !request.isNoReply { pair.server.send(reply: .reply(to: request, body: request.body, compressed: true)) }
        })
        let frames = pair.wire
        var detected = 0
        for _ in 0..<150 {
            let decoder = ConnectionDecoder()
            let victim = Int(random.next() % UInt64(frames.count))
            var errors = 0
            for (index, entry) in frames.enumerated() {
                var bytes = entry.bytes
                if index == victim {
                    if random.next() % 3 == 0 {
                        bytes = bytes.getSlice(at: bytes.readerIndex, length: Int(random.next() % UInt64(bytes.readableBytes + 1)))!
                    } else {
                        let at = bytes.readerIndex + Int(random.next() % UInt64(bytes.readableBytes))
                        let old = bytes.getInteger(at: at, as: UInt8.self)!
                        bytes.setInteger(old ^ UInt8(1 << (random.next() % 8)), at: at)
                    }
                }
                do {
                    let decoded = try decoder.receive(bytes, from: entry.direction)
                    if case .ignored = decoded.outcome { errors += 1 }
                } catch {
                    // `receive` throws(BLIPError): no other error type can come out.
                    errors += 1
                }
            }
            if errors > 0 { detected += 1 }
        }
        // A flipped flag bit (Urgent, say) is undetectable, but most mutations must be caught.
        #expect(detected > 100)
    }
}
