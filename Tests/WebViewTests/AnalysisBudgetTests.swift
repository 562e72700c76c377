import BLIPCore
import Testing
@testable import WebView

/// The analyzer's readings a session's ring keeps are counted against a budget: a peer that sends
/// huge changes batches cannot grow the web view's memory past it; the messages are still listed.
@Suite("Readings kept per session")
struct AnalysisBudgetTests {
    /// A changes batch of `count` entries with long document and revision IDs.
    func changes(_ number: MessageNumber, entries count: Int) -> BLIPMessage {
        let entries = (0..<count).map { "[\($0 + 1),\"document-with-a-long-name-\(number)-\($0)\",\"\(revA1)\"]" }
        return request("changes", number, body: "[" + entries.joined(separator: ",") + "]")
    }

    @Test("past the budget a message is kept without its reading; readings come back as older ones leave the ring")
    func readingsStayWithinTheBudget() throws {
        var limits = WebViewLimits()
        limits.maxMessagesPerSession = 8
        limits.maxAnalysisBytesPerMessage = 25 * 1024
        #expect(limits.maxAnalysisBytesPerSession == 200 * 1024)
        let script = SessionScript(limits: limits)
        let reading = script.server(changes(1, entries: 500)).retainedBytes
        #expect(reading > 500 * 60 && reading < 200 * 1024, "one batch's reading: its entries' IDs and more, within the budget")
        for number in 2...6 { script.server(changes(MessageNumber(number), entries: 500)) }

        var records = script.recording.records(from: 0, limit: 8)
        #expect(records.count == 6, "every message is listed")
        let kept = records.filter { $0.analysis != nil }
        #expect(kept.count == (200 * 1024) / reading && kept.count < 6)
        #expect(records.reduce(0) { $0 + $1.analysisBytes } <= limits.maxAnalysisBytesPerSession)
        #expect(script.recording.snapshot().analysesSkipped == 6 - kept.count)
        #expect(records.last?.summary == "MSG#6 changes", "a message without its reading is summarized by its profile")
        let session = try object(WebJSON.session(script.recording, now: script.time))
        #expect(session["readingsNotKept"] as? Int == 6 - kept.count, "the page can say how many")

        // Small messages push the batches out of the ring: a new batch has room for its reading again.
        for number in 7...14 { script.client(request("getCheckpoint", MessageNumber(number), [("client", "c")])) }
        script.server(changes(15, entries: 500))
        records = script.recording.records(from: 0, limit: 100)
        #expect(records.last?.analysis != nil, "the budget was given back as readings left the ring")
        #expect(records.reduce(0) { $0 + $1.analysisBytes } <= limits.maxAnalysisBytesPerSession)
    }
}
