@testable import Capture
import NIOCore
import Testing

@Suite struct HTTPUpgradeParserTests {
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test(arguments: [1, 5, 64, 10_000])
    func requestHeadInPiecesLeavesTheRemainder(pieceSize: Int) throws {
        let input = Array(WebSocketBytes.upgradeRequest.utf8) + [0x82, 0x80, 1, 2, 3, 4]
        var parser = HTTPUpgradeParser()
        var result: (head: HTTPRequestHead, remainder: ByteBuffer)?
        var offset = 0
        while result == nil, offset < input.count {
            let end = min(input.count, offset + pieceSize)
            result = try parser.parseRequest(appending: ByteBuffer(bytes: input[offset..<end]))
            offset = end
        }
        let (head, remainder) = try #require(result)
        #expect(head.method == "GET")
        #expect(head.target == "/db/_blipsync?client=test")
        #expect(head.path == "/db/_blipsync")
        #expect(head.query == "client=test")
        #expect(head.version == "HTTP/1.1")
        #expect(head.headers.count == 6)
        #expect(head.headers["SEC-WEBSOCKET-PROTOCOL"] == "BLIP_3+CBMobile_3")
        #expect(head.headers.fields.first?.name == "Host")
        #expect(head.isWebSocketUpgrade)
        #expect(Array(remainder.readableBytesView) + Array(input[offset...]) == [0x82, 0x80, 1, 2, 3, 4])
    }

    @Test func responseHeadWithListsAndFolding() throws {
        let text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Protocol:BLIP_3+CBMobile_4 , BLIP_3+CBMobile_3\r\nX-Long: first\r\n  second\r\n\r\n"
        var parser = HTTPUpgradeParser()
        let (head, remainder) = try #require(try parser.parseResponse(appending: Self.bytes(text)))
        #expect(head.status == 101)
        #expect(head.reason == "Switching Protocols")
        #expect(head.isSwitchingProtocols)
        #expect(head.headers.listValues(for: "sec-websocket-protocol") == ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"])
        #expect(head.headers["X-Long"] == "first second")
        #expect(remainder.readableBytes == 0)
    }

    @Test func refusedUpgradeWithBareLineFeedsAndNoReason() throws {
        let text = "HTTP/1.1 500\nContent-Length: 3\nContent-Type: text/plain\n\nabc"
        var parser = HTTPUpgradeParser()
        let (head, remainder) = try #require(try parser.parseResponse(appending: Self.bytes(text)))
        #expect(head.status == 500)
        #expect(head.reason == "")
        #expect(head.contentLength == 3)
        #expect(String(buffer: remainder) == "abc")
    }

    @Test func incompleteHeadWaits() throws {
        var parser = HTTPUpgradeParser()
        #expect(try parser.parseResponse(appending: Self.bytes("HTTP/1.1 101 OK\r\nA: b\r\n")) == nil)
        #expect(try parser.parseResponse(appending: Self.bytes("\r")) == nil)
        #expect(try parser.parseResponse(appending: Self.bytes("\n")) != nil)
    }

    @Test func nonHTTPBytesFailFast() {
        var request = HTTPUpgradeParser()
        #expect(throws: CaptureError.self) { try request.parseRequest(appending: ByteBuffer(bytes: [0x16, 0x03, 0x01])) }
        var response = HTTPUpgradeParser()
        #expect(throws: CaptureError.self) { try response.parseResponse(appending: Self.bytes("HTTQ")) }
    }

    @Test func malformedLinesAreErrors() {
        for text in ["GET /only-two-parts\r\n\r\n", "GET / HTTP/1.1\r\nno colon here\r\n\r\n", "GET / HTTP/1.1\r\n folded first\r\n\r\n"] {
            var parser = HTTPUpgradeParser()
            #expect(throws: CaptureError.self, "\(text.debugDescription)") { try parser.parseRequest(appending: Self.bytes(text)) }
        }
        var response = HTTPUpgradeParser()
        #expect(throws: CaptureError.self) { try response.parseResponse(appending: Self.bytes("HTTP/1.1 abc Nope\r\n\r\n")) }
    }

    @Test func headLongerThanTheLimitIsAnError() throws {
        var parser = HTTPUpgradeParser(maxHeadBytes: 64)
        let error = #expect(throws: CaptureError.self) {
            try parser.parseRequest(appending: Self.bytes("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 100)))
        }
        #expect(error?.code == .httpHeadTooLarge)
    }

    @Test func recognisesStartsOfRequestsAndResponses() {
        #expect(HTTPUpgradeParser.looksLikeRequest(Self.bytes("GET / HTTP/1.1")))
        #expect(!HTTPUpgradeParser.looksLikeRequest(Self.bytes("GETX")))
        #expect(HTTPUpgradeParser.looksLikeResponse(Self.bytes("HTTP/1.1 200")))
        #expect(!HTTPUpgradeParser.looksLikeResponse(Self.bytes("HTTP/2")))
    }
}
