import Capture
import Testing

/// A WebSocket whose TCP stream ends without the sender's CLOSE is a drop (1006 to the peer);
/// `inspect --summary` names it, so the importer must say which streams ended that way.
@Suite struct TCPDropTests {
    @Test func streamsEndingWithoutCloseAreDrops() throws {
        var dropped = SyntheticCapture()
        CaptureImporterTests.session(&dropped, exchanges: 2, closing: false)
        dropped.close(from: .client, flags: SyntheticCapture.rst)
        dropped.close(from: .server)
        let connection = try #require(try CaptureImporterTests.importFile(dropped).first)
        #expect(connection.dropsWithoutClose.map(\.direction) == [.clientToServer, .serverToClient])
        #expect(connection.dropsWithoutClose.map(\.kind) == [.rst, .fin])

        var orderly = SyntheticCapture()
        CaptureImporterTests.session(&orderly, exchanges: 2)
        #expect(try CaptureImporterTests.importFile(orderly).first?.dropsWithoutClose.isEmpty == true)
    }

    @Test func aPeerThatNeverAnswersTheCloseDropsItsSide() throws {
        var capture = SyntheticCapture()
        CaptureImporterTests.session(&capture, exchanges: 1, closing: false)
        capture.send(WebSocketBytes.close(code: 1000, masked: true), from: .client)
        capture.close(from: .client)
        capture.close(from: .server)
        let drops = try #require(try CaptureImporterTests.importFile(capture).first).dropsWithoutClose
        #expect(drops.map(\.direction) == [.serverToClient] && drops.map(\.kind) == [.fin])
    }
}
