import BLIPCore
import BLIPTestSupport
@testable import Capture
import NIOCore
import Testing

@Suite("Capture redaction: secrets masked inside frame bytes, streams still decode")
struct CaptureRedactorTests {
    /// A secret long enough that its properties span several 16 KiB frames.
    static let longToken = "tok-" + String(repeating: "s3cr3t-v4lue-", count: 3_000)
    static let password = "hunter2-correct-horse"

    /// Frames as recorded on the wire: the client sends compressed requests carrying secrets
    /// (one whose properties span frames, then the same one again, so the sender's deflate
    /// stream refers back to the secret), the server answers uncompressed with a session token
    /// spanning frames and a short cookie; plain messages come before and after.
    static func conversation() throws -> (wire: [(direction: BLIPDirection, bytes: ByteBuffer)], sent: Int) {
        let pair = EndpointPair()
        var random = SeededRandom(seed: 16)
        func body(_ size: Int) -> ByteBuffer { ByteBuffer(bytes: random.bytes(size, compressible: true)) }
        pair.client.send(request: .request(profile: "getCheckpoint", properties: ["client": "cp-1"], body: body(200), compressed: true))
        pair.client.send(request: .request(profile: "login", properties: ["Authorization": "Bearer " + longToken],
                                           body: body(40_000), compressed: true))
        pair.client.send(request: .request(profile: "login", properties: ["Authorization": "Bearer " + longToken],
                                           body: body(300), compressed: true))
        pair.client.send(request: .request(profile: "changes", properties: ["password": password, "since": "42"],
                                           body: body(20_000), compressed: true))
        pair.client.send(request: .request(profile: "changes", properties: ["since": "43"], body: body(30_000), compressed: true))
        let (received, _) = try pair.pump(onServerMessage: { request in
            guard !request.isNoReply else { return }
            let properties: Properties = request.profile == "login"
                ? ["SyncGatewaySession": longToken, "Cookie": "a=b", "user": "ada"] : ["seq": "7"]
            pair.server.send(reply: .reply(to: request, properties: properties, body: body(25_000)))
        })
        return (pair.wire, received.count)
    }

    static func redacted(_ wire: [(direction: BLIPDirection, bytes: ByteBuffer)],
                         _ redactor: CaptureRedactor = CaptureRedactor()) -> [CaptureRecord] {
        var records: [CaptureRecord] = []
        for (direction, bytes) in wire {
            let frame = CaptureRecord.Frame(time: .zero, direction: direction, bytes: bytes)
            switch redactor.redact(frame) {
            case .unchanged: records.append(.frame(frame))
            case .records(let output): records += output
            }
        }
        return records
    }

    /// Decodes recorded frames as a reader would; every message, in order, per direction.
    static func decode(_ records: [CaptureRecord]) throws -> [BLIPDirection: [BLIPMessage]] {
        let decoder = ConnectionDecoder()
        var messages: [BLIPDirection: [BLIPMessage]] = [:]
        for case .frame(let frame) in records {
            let decoded = try decoder.receive(frame.bytes, from: frame.direction)
            if case .ignored(let error) = decoded.outcome { Issue.record("ignored frame: \(error)") }
            if let message = decoded.message { messages[frame.direction, default: []].append(message) }
        }
        return messages
    }

    static func contains(_ haystack: ByteBuffer, _ needle: String) -> Bool {
        let bytes = Array(haystack.readableBytesView)
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return false }
        return (0...(bytes.count - pattern.count)).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    @Test("a compressed and an uncompressed direction with secrets spanning frames decode to the same messages, secrets masked")
    func bothDirections() throws {
        let (wire, sent) = try Self.conversation()
        #expect(sent == 5)
        #expect(wire.contains { $0.direction == .clientToServer && ($0.bytes.getInteger(at: 1, as: UInt8.self)! & 0x48) == 0x48 },
                "the client's multi-frame requests are compressed")
        let original = try Self.decode(wire.map { .frame(.init(time: .zero, direction: $0.direction, bytes: $0.bytes)) })
        let records = Self.redacted(wire)
        #expect(records.allSatisfy { if case .frame = $0 { true } else { false } }, "nothing withheld, no notes")
        let redacted = try Self.decode(records)  // throws on any checksum or inflate error

        for direction in BLIPDirection.allCases {
            let before = original[direction] ?? []
            let after = redacted[direction] ?? []
            #expect(before.count == 5 && after.count == 5)
            for (one, two) in zip(before, after) {
                #expect(one.number == two.number && one.type == two.type && one.flags == two.flags)
                #expect(one.body == two.body)
                #expect(one.frameCount == two.frameCount)
                #expect(one.properties.pairs.map(\.key) == two.properties.pairs.map(\.key))
                for (old, new) in zip(one.properties.pairs, two.properties.pairs) {
                    if PropertyRedaction.isSecret(old.key) {
                        #expect(new.value.utf8.count == old.value.utf8.count, "\(old.key) keeps its length")
                        #expect(old.value.count < 10 ? new.value == String(repeating: "*", count: old.value.count)
                                                     : new.value.hasPrefix("<redacted>") && new.value.dropFirst(10).allSatisfy { $0 == "*" })
                    } else {
                        #expect(new.value == old.value)
                    }
                }
            }
        }
        let password = try #require(redacted[.clientToServer]?.compactMap { $0.properties["password"] }.first)
        #expect(password == "<redacted>" + String(repeating: "*", count: Self.password.count - 10))
        #expect(redacted[.serverToClient]?.compactMap { $0.properties["Cookie"] } == ["***", "***"])
        // In the recorded bytes, the uncompressed direction shows no trace of the token either.
        for case .frame(let frame) in records {
            #expect(!Self.contains(frame.bytes, "s3cr3t-v4lue"))
            #expect(!Self.contains(frame.bytes, Self.password))
        }
    }

    @Test("fed the relay decoder's readings, the redactor records the same bytes and inflates nothing itself")
    func readingsFromTheRelaysDecoder() throws {
        let (wire, _) = try Self.conversation()
        let own = Self.redacted(wire)
        let decoder = ConnectionDecoder()
        decoder.exposesPayloads = true
        let redactor = CaptureRedactor()
        var records: [CaptureRecord] = []
        for (direction, bytes) in wire {
            let decoded = try decoder.receive(bytes, from: direction)
            let reading = decoded.payload.map { DecodedChunk(payload: $0, checksumBefore: decoded.checksumBefore) }
            let frame = CaptureRecord.Frame(time: .zero, direction: direction, bytes: bytes)
            switch redactor.redact(frame, decoded: reading) {
            case .unchanged: records.append(.frame(frame))
            case .records(let output): records += output
            }
        }
        #expect(redactor.framesReadItself == 0)
        let ownFrames = own.compactMap { record -> ByteBuffer? in if case .frame(let frame) = record { frame.bytes } else { nil } }
        let sharedFrames = records.compactMap { record -> ByteBuffer? in if case .frame(let frame) = record { frame.bytes } else { nil } }
        #expect(ownFrames.count == wire.count && sharedFrames == ownFrames, "byte for byte what it records reading the stream itself")

        // A direction read from the relay's decoder and then no longer: the rest is withheld, with a note.
        let later = CaptureRedactor()
        let first = wire.first { $0.direction == .clientToServer }!
        let fresh = ConnectionDecoder()
        fresh.exposesPayloads = true
        let decoded = try fresh.receive(first.bytes, from: .clientToServer)
        _ = later.redact(.init(time: .zero, direction: .clientToServer, bytes: first.bytes),
                         decoded: DecodedChunk(payload: decoded.payload!, checksumBefore: decoded.checksumBefore))
        let second = wire.filter { $0.direction == .clientToServer }[1]
        guard case .records(let output) = later.redact(.init(time: .zero, direction: .clientToServer, bytes: second.bytes)),
              case .note(_, let text) = output.first else {
            Issue.record("a frame without the relay's reading is withheld")
            return
        }
        #expect(text.contains("the relay stopped decoding this direction"))
    }

    /// One uncompressed `login` request whose `password` value a frame boundary cuts after
    /// `bytesInFirstFrame` of its bytes; what the redacted capture decodes it to, and the wire.
    static func passwordCut(_ password: String, afterBytes bytesInFirstFrame: Int, compressed: Bool = false) throws
        -> (recorded: String, wire: [ByteBuffer], records: [CaptureRecord]) {
        // Payload per frame: maxFrameSize − number and flags (2) − checksum (4). The value starts
        // after the length varint, "Profile\0login\0" and "password\0".
        let valueStart = 1 + 14 + 9
        var limits = BLIPLimits.default
        limits.maxFrameSize = valueStart + bytesInFirstFrame + 6
        let pair = EndpointPair(limits: limits)
        pair.client.send(request: .request(profile: "login", properties: ["password": password],
                                           body: ByteBuffer(string: "{}"), compressed: compressed))
        try pair.pump()
        let records = Self.redacted(pair.wire)
        let message = try #require(Self.decode(records)[.clientToServer]?.first)
        return (try #require(message.properties["password"]), pair.wire.map(\.bytes), records)
    }

    @Test("a secret value a frame boundary cuts within its first ten bytes is all `*`, however long; ten bytes in its first frame get the marker")
    func secretValueCutByAFrame() throws {
        let short = try Self.passwordCut("pas5word", afterBytes: 3)
        let firstPayload = short.wire[0].getSlice(at: 2, length: short.wire[0].readableBytes - 6)!
        #expect(String(buffer: firstPayload).hasSuffix("password\0pas"), "the boundary falls three bytes into the value")
        #expect(short.recorded == "********")

        let long = try Self.passwordCut(Self.password, afterBytes: 3)
        #expect(long.recorded == String(repeating: "*", count: Self.password.count),
                "the first frame is recorded before the value's length is known: stars, not a cut marker")

        let markerWhole = try Self.passwordCut(Self.password, afterBytes: 10)
        #expect(markerWhole.recorded == "<redacted>" + String(repeating: "*", count: Self.password.count - 10))

        let whole = try Self.passwordCut("pas5word", afterBytes: 40)
        #expect(whole.recorded == "********", "a short value in one frame")

        for cut in [short, long, markerWhole, whole] {
            for case .frame(let frame) in cut.records {
                #expect(!Self.contains(frame.bytes, "password\0pas") && !Self.contains(frame.bytes, "hunter"),
                        "no byte of the value is kept")
            }
        }
    }

    @Test("a session without secrets is recorded as it came, frame by frame")
    func noSecrets() throws {
        let pair = EndpointPair()
        var random = SeededRandom(seed: 3)
        for index in 0..<6 {
            pair.client.send(request: .request(profile: "rev", properties: ["id": "doc-\(index)", "rev": "1-abc"],
                                               body: ByteBuffer(bytes: random.bytes(30_000, compressible: true)),
                                               compressed: index % 2 == 0))
        }
        try pair.pump(onServerMessage: { pair.server.send(reply: .reply(to: $0, compressed: true)) })
        let redactor = CaptureRedactor()
        for (direction, bytes) in pair.wire {
            guard case .unchanged = redactor.redact(.init(time: .zero, direction: direction, bytes: bytes)) else {
                Issue.record("a frame without secrets was rewritten")
                return
            }
        }
    }

    @Test("a secret in an uncompressed frame leaves later compressed frames' deflated bytes alone; only checksums change")
    func uncompressedSecretThenCompressed() throws {
        let pair = EndpointPair()
        pair.client.send(request: .request(profile: "x", properties: ["token": "abcdefghijklmnop"], noReply: true))
        var body = ByteBuffer()
        body.writeString(String(repeating: "compressible text ", count: 200))
        pair.client.send(request: .request(profile: "rev", body: body, compressed: true, noReply: true))
        try pair.pump()
        let records = Self.redacted(pair.wire)
        guard records.count == 2, case .frame(let first) = records[0], case .frame(let second) = records[1] else {
            Issue.record("expected two frames, got \(records)")
            return
        }
        #expect(first.bytes != pair.wire[0].bytes && second.bytes != pair.wire[1].bytes)
        let original = pair.wire[1].bytes
        #expect(second.bytes.readableBytes == original.readableBytes)
        #expect(second.bytes.getSlice(at: 0, length: original.readableBytes - 4) == original.getSlice(at: 0, length: original.readableBytes - 4))
        let messages = try Self.decode(records)[.clientToServer] ?? []
        #expect(messages.map { $0.properties["token"] } == ["<redacted>******", nil])
        #expect(messages.last?.body == body)
    }

    @Test("legs split when the relay re-encodes a direction: each leg is its own consistent stream")
    func legsSplit() throws {
        let (wire, _) = try Self.conversation()
        let redactor = CaptureRedactor()
        var records: [CaptureRecord] = []
        // The first half crossed both legs; from then on client→upstream frames appear once per leg.
        for (index, (direction, bytes)) in wire.enumerated() {
            let legs: [CaptureLeg] = index < wire.count / 2 || direction == .serverToClient ? [.both] : [.client, .upstream]
            for leg in legs {
                let frame = CaptureRecord.Frame(time: .zero, direction: direction, leg: leg, bytes: bytes)
                switch redactor.redact(frame) {
                case .unchanged: records.append(.frame(frame))
                case .records(let output): records += output
                }
            }
        }
        for leg in [CaptureLeg.client, .upstream] {
            let onLeg = records.filter { if case .frame(let frame) = $0 { frame.leg.appears(on: leg) } else { false } }
            let messages = try Self.decode(onLeg)
            #expect(messages[.clientToServer]?.count == 5)
            let authorizations = messages[.clientToServer]?.compactMap { $0.properties["Authorization"] } ?? []
            #expect(authorizations.count == 2)
            #expect(authorizations.allSatisfy { $0.hasPrefix("<redacted>") && !$0.contains("s3cr3t") })
        }
    }

    @Test("frames that cannot be checked are withheld with one note; ACKs still pass; mid-session joins withhold data")
    func unreadable() throws {
        let redactor = CaptureRedactor()
        var garbage = ByteBuffer(bytes: [0x01, 0x08, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x00])  // compressed, not deflate
        var result = redactor.redact(.init(time: .zero, direction: .clientToServer, bytes: garbage))
        guard case .records(let records) = result, records.count == 1, case .note(_, let text) = records[0] else {
            Issue.record("expected one note, got \(result)")
            return
        }
        #expect(text.contains("--capture-secrets"))
        garbage = ByteBuffer(bytes: [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        result = redactor.redact(.init(time: .zero, direction: .clientToServer, bytes: garbage))
        guard case .records(let none) = result, none.isEmpty else { Issue.record("expected nothing, got \(result)"); return }
        let ack = BLIPFrame.ack(.ackRequest, number: 1, bytes: 50_000)
        guard case .unchanged = redactor.redact(.init(time: .zero, direction: .clientToServer, bytes: ack)) else {
            Issue.record("an ACK was withheld")
            return
        }
        #expect(redactor.withheldFrames == 2)

        let late = CaptureRedactor(joinedMidSession: true)
        let frame = ByteBuffer(bytes: [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        guard case .records(let notes) = late.redact(.init(time: .zero, direction: .serverToClient, bytes: frame)) else {
            Issue.record("a frame of a session joined late was recorded")
            return
        }
        #expect(notes.count == 1)
    }
}
