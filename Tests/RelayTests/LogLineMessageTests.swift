import BLIPCore
import NIOCore
import Testing
@testable import Relay

/// The message line's field order: Profile, what the relay knows (summary, request profile, round
/// trip), then the other properties in order, wherever Profile stood among them.
@Suite struct LogLineMessageTests {
    /// A properties block as a peer sends it (the relay decodes into this form).
    static func block(_ pairs: [(String, String)]) throws -> Properties {
        var buffer = ByteBuffer()
        for (key, value) in pairs {
            buffer.writeString(key)
            buffer.writeInteger(UInt8(0))
            buffer.writeString(value)
            buffer.writeInteger(UInt8(0))
        }
        return try Properties.decode(block: buffer)
    }

    /// The text line after its timestamp.
    static func line(_ properties: Properties, type: MessageType = .request, summary: String? = nil,
                     requestProfile: String? = nil, roundTrip: TimeAmount? = nil) -> String {
        var message = BLIPMessage(type: type, number: 5, properties: properties, body: ByteBuffer(string: "{}"))
        message.wirePayloadBytes = 20
        let event = MessageEvent(sessionID: 3, direction: .clientToServer, message: message,
                                 requestProfile: requestProfile, roundTrip: roundTrip)
        let line = LogLine(format: .text, redactBodies: false, withBody: false).message(event, summary: summary).finish()
        return String(line.dropFirst(LogTimestamp.length))
    }

    static let head = " session=3 dir=C→U type=MSG number=5 flags=-"
    static let tail = " wireBytes=20 bodyBytes=2"

    @Test func profileLeading() throws {
        let properties = try Self.block([("Profile", "rev"), ("id", "doc 1"), ("SessionToken", "t"),
                                         ("long", String(repeating: "v", count: 100))])
        #expect(Self.line(properties, summary: "rev doc", requestProfile: "x", roundTrip: .microseconds(1500))
                == Self.head + " profile=rev summary=\"rev doc\" re=x rttMs=1.500 id=\"doc 1\" SessionToken=<redacted> long="
                + String(repeating: "v", count: LogLine.maxValueLength) + Self.tail)
    }

    @Test func profileFollowingOtherProperties() throws {
        let properties = try Self.block([("seq", "7"), ("Profile", "changes"), ("cookie_x", "c")])
        #expect(Self.line(properties, summary: "s")
                == Self.head + " profile=changes summary=s seq=7 cookie_x=<redacted>" + Self.tail)
        let pairs = Properties([("seq", "7"), ("Profile", "changes"), ("Profile", "again")])
        #expect(Self.line(pairs) == Self.head + " profile=changes seq=7" + Self.tail, "the first Profile, others left out")
    }

    @Test func noProfile() throws {
        #expect(Self.line(try Self.block([("Error-Code", "404")]), type: .error, requestProfile: "getAttachment")
                == " session=3 dir=C→U type=ERR number=5 flags=- re=getAttachment Error-Code=404" + Self.tail)
        #expect(Self.line(Properties(), type: .response, summary: "ok", roundTrip: .nanoseconds(999))
                == " session=3 dir=C→U type=RPY number=5 flags=- summary=ok rttMs=0.000" + Self.tail)
    }
}
