import BLIPTestSupport
import Gateway
import Foundation
import NIOPosix
import Testing

/// `blipscope web CAPTURE…` as a user runs it, and the admin listener's token rules for the page.
@Suite struct WebCommandTests {
    @Test func webServesACaptureFileOnLoopback() async throws {
        let capture = BlipscopeExecutable.packageRoot.appendingPathComponent("samples/goblip-session.pcap").path
        let web = try BlipscopeExecutable.start(["web", capture])
        defer { web.kill() }
        let printed = try await web.waitForOutput(within: 60) { $0.contains("\n") }
        let url = try #require(printed.split(separator: "\n").first.map(String.init))
        #expect(url.hasPrefix("http://127.0.0.1:"))
        let port = try #require(BlipscopeExecutable.port(after: "127.0.0.1", in: url))
        let group = MultiThreadedEventLoopGroup.singleton
        let sessions = try await webGet(port: port, path: "/api/sessions", group: group)
        #expect(sessions.status == 200 && sessions.body.contains("\"source\":\"\(capture)\""))
        let errors = try await webGet(port: port, path: "/api/sessions/1/messages?type=ERR", group: group)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(errors.body.utf8)) as? [String: Any])["rows"] as? [[String: Any]]
        #expect(rows?.count == 1 && rows?.first?["p"] as? String == "fail")
        let page = try await webGet(port: port, path: "/", group: group)
        #expect(page.body.contains("BlipScope"))
        let status = try await web.stop()
        #expect(status == 0)
    }

    @Test func theAdminTokenGuardsThePageAndMayComeInItsQuery() async throws {
        try await withWebRelay(token: "s3cret") { web in
            let bare = try await web.get("/api/sessions").status
            let wrong = try await web.get("/?access_token=wrong").status
            let page = try await web.get("/?access_token=s3cret").status
            let api = try await web.get("/api/sessions?access_token=s3cret").status
            let metrics = try await web.get("/metrics?access_token=s3cret").status
            #expect(bare == 401 && wrong == 401)
            #expect(page == 200 && api == 200)
            #expect(metrics == 401, "only the web view's paths take the token in the query")
        }
    }

    @Test func theSessionsCaptureCanBeDownloadedFromThePage() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-web-capture-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withWebRelay(seed: ReplicatorTests.seedGateway, captureDirectory: directory) { web in
            let local = GatewayDatabase(name: "local")
            _ = try await web.relayed.replicator(.pull, into: local).run()
            await web.relayed.recorder.waitForClosedSessions(1)
            let id = try #require(web.history.recordings().first?.description.id)
            let download = try await StreamedGet.start(port: web.adminPort, path: "/api/sessions/\(id)/capture.blipcap",
                                                       group: web.relayed.gateway.group)
            let text = try await download.until { $0.contains("\r\n\r\n") }
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.contains("filename=\"session-\(id).blipcap\""))
            download.close()
            #expect(try await web.get("/api/sessions/999/capture.blipcap").status == 404)
        }
    }
}
