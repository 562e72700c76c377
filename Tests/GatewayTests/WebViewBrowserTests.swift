import BLIPCore
import BLIPTestSupport
import Foundation
import Gateway
import Testing
import WebView

/// The page in a real browser (headless Chromium, driven over the DevTools protocol by
/// `Tests/Browser/check_page.py`) while a continuous pull runs through the relay: the sessions
/// appear, messages stream in, a filter narrows them, a detail shows decoded JSON, a document's
/// timeline opens, a provoked checkpoint 409 loop shows as a finding. With
/// `BLIPSCOPE_SCREENSHOTS=DIR` it also saves a screenshot of each view there (docs/ has them).
@Suite struct WebViewBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/check_page.py").path

    /// The replication tests' documents, a dozen more (so the first changes batch names more
    /// documents than a message row carries) and one large enough to take several frames.
    static func seed(_ database: GatewayDatabase) throws {
        try ReplicatorTests.seedGateway(database)
        for index in 1...12 { try database.put(String(format: "bulk-%02d", index), body: ["name": .string("Bulk \(index)")]) }
        try database.put("bulk-large", body: ["name": .string("Large"), "text": .string(String(repeating: "lorem ipsum ", count: 4_000))])
    }

    @Test(.enabled(if: chromium != nil && python != nil,
                   "chromium (or python3) is not installed: `make test` installs chromium; the browser test cannot run without it"))
    func thePageShowsLiveTrafficAndFindings() async throws {
        try await withWebRelay(seed: Self.seed) { web in
            try await web.provokeCheckpointLoop()
            await web.relayed.recorder.waitForClosedSessions(1)
            let loop = try #require(web.history.recordings().first?.description.id)

            let local = GatewayDatabase(name: "local")
            let replicator = web.relayed.replicator(.pull, into: local) { $0.continuous = true }
            let running = Task { try await replicator.run() }
            defer { replicator.stop() }
            let sessions = try await StreamedGet.start(port: web.adminPort, path: "/api/events", group: web.relayed.gateway.group)
            _ = try await sessions.until { $0.contains("\"live\":true") && $0.contains("\"total\":") }
            sessions.close()
            let live = try #require(web.history.recordings().first { $0.snapshot().isLive }?.description.id)

            var arguments = [Self.script, web.base + "/", String(live), String(loop)]
            if let shots = ProcessInfo.processInfo.environment["BLIPSCOPE_SCREENSHOTS"] { arguments += ["--screenshots", shots] }
            let browser = try RunningCommand(executable: try #require(Self.python), arguments: arguments)
            defer { browser.kill() }
            let asked = try await browser.waitForOutput(within: 600) { $0.contains("need-traffic") || $0.contains("FAIL") }
            #expect(!asked.contains("FAIL"), "\(asked)\n\(browser.errors.text)")
            try web.relayed.gateway.database.put("streamed-doc", body: ["name": .string("streamed while watched")])
            let status = try await browser.waitForExit(within: 900)
            #expect(status == 0 && browser.output.text.contains("PASS"), "\(browser.output.text)\n\(browser.errors.text)")
            replicator.stop()
            _ = try await running.value
        }
    }
}
