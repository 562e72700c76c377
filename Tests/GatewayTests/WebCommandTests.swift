import BLIPTestSupport
import Capture
import WebView
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
        // The client's MSG#6 took several frames, interleaved with other messages: each is listed.
        let all = try await webGet(port: port, path: "/api/sessions/1/messages?limit=500", group: group)
        let allRows = try #require(try JSONSerialization.jsonObject(with: Data(all.body.utf8)) as? [String: Any])["rows"] as? [[String: Any]]
        let big = try #require(allRows?.first { $0["ty"] as? String == "MSG" && $0["n"] as? Int == 6 && $0["d"] as? Int == 0 })
        let detail = try await webGet(port: port, path: "/api/sessions/1/messages/\(try #require(big["i"] as? Int))", group: group)
        let message = try #require(try JSONSerialization.jsonObject(with: Data(detail.body.utf8)) as? [String: Any])
        let frames = try #require(message["frames"] as? Int)
        #expect(frames > 1 && (message["frameList"] as? [[String: Any]])?.count == frames, "every frame of MSG#6, not only its last")
        let page = try await webGet(port: port, path: "/", group: group)
        #expect(page.body.contains("BlipScope"))
        let status = try await web.stop()
        #expect(status == 0)
    }

    @Test func webWithATokenServesOnlyRequestsThatCarryIt() async throws {
        let capture = BlipscopeExecutable.packageRoot.appendingPathComponent("samples/goblip-session.pcap").path
        let web = try BlipscopeExecutable.start(["web", "--token", "s3cret", capture])
        defer { web.kill() }
        let printed = try await web.waitForOutput(within: 60) { $0.contains("\n") }
        let url = try #require(printed.split(separator: "\n").first.map(String.init))
        #expect(url.hasSuffix("/?access_token=s3cret"), "the printed URL opens the page: \(url)")
        let port = try #require(BlipscopeExecutable.port(after: "127.0.0.1", in: url))
        let group = MultiThreadedEventLoopGroup.singleton
        #expect(try await webGet(port: port, path: "/api/sessions", group: group).status == 401)
        #expect(try await webGet(port: port, path: "/api/sessions?access_token=wrong", group: group).status == 401)
        #expect(try await webGet(port: port, path: "/api/sessions?access_token=s3cre", group: group).status == 401)
        #expect(try await webGet(port: port, path: "/api/sessions?access_token=s3cret", group: group).status == 200)
        #expect(try await webGet(port: port, path: "/?access_token=s3cret", group: group).status == 200)
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

    @Test func theSessionsCaptureAndPcapAreDownloadedFromThePageAndReadBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-web-capture-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withWebRelay(seed: ReplicatorTests.seedGateway, captureDirectory: directory) { web in
            let local = GatewayDatabase(name: "local")
            _ = try await web.relayed.replicator(.pull, into: local).run()
            await web.relayed.recorder.waitForClosedSessions(1)
            let recording = try #require(web.history.recordings().first)
            let id = recording.description.id
            // The relay writes its captures out as it stops; the admin listener keeps serving.
            try await web.relayed.relay.shutdown()

            let sessions = try #require(try await web.json("/api/sessions")["sessions"] as? [[String: Any]])
            #expect(sessions.first { $0["id"] as? Int == Int(id) }?["capture"] as? Bool == true, "the page offers the downloads")
            #expect(try await web.json("/api/sessions/\(id)")["capture"] as? Bool == true)

            let file = try #require(CaptureFileDownloads(directory: directory, run: web.relayed.relay.configuration.captureRun)
                .captureFile(sessionID: id))
            let blipcap = try await webGetBytes(port: web.adminPort, path: "/api/sessions/\(id)/capture.blipcap",
                                                group: web.relayed.gateway.group)
            #expect(blipcap.status == 200 && blipcap.head.contains("filename=\"session-\(id).blipcap\""))
            #expect(blipcap.body == Array(try Data(contentsOf: URL(fileURLWithPath: file))), "the file, byte for byte")

            let pcap = try await webGetBytes(port: web.adminPort, path: "/api/sessions/\(id)/capture.pcap",
                                             group: web.relayed.gateway.group)
            #expect(pcap.status == 200 && pcap.head.contains("filename=\"session-\(id).pcap\""))
            let magic = pcap.body.prefix(4)
            #expect([[0xd4, 0xc3, 0xb2, 0xa1], [0xa1, 0xb2, 0xc3, 0xd4], [0x4d, 0x3c, 0xb2, 0xa1], [0xa1, 0xb2, 0x3c, 0x4d]]
                .contains(Array(magic)), "pcap magic, not \(Array(magic))")
            // Each download's pcap is its own file, gone once it is sent: two at once both read
            // back whole, and nothing is left behind in the temporary directory.
            let madePcaps = {
                ((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
                    .filter { $0.hasPrefix("blipscope-web-\(getpid())-") && $0.hasSuffix(".pcap") }
            }
            #expect(madePcaps().isEmpty, "made pcaps left behind: \(madePcaps())")
            async let first = webGetBytes(port: web.adminPort, path: "/api/sessions/\(id)/capture.pcap",
                                          group: web.relayed.gateway.group)
            async let second = webGetBytes(port: web.adminPort, path: "/api/sessions/\(id)/capture.pcap",
                                           group: web.relayed.gateway.group)
            let (one, two) = try await (first, second)
            #expect(one.body == pcap.body && two.body == pcap.body, "concurrent downloads: \(one.body.count), \(two.body.count) bytes")
            #expect(madePcaps().isEmpty, "made pcaps left behind: \(madePcaps())")
            let saved = directory + "/downloaded.pcap"
            try Data(pcap.body).write(to: URL(fileURLWithPath: saved))
            let connections = try importConnections(fromPcapAt: saved).filter { $0.kind == .webSocket }
            #expect(connections.count == 1)
            var read: [String] = []
            if let connection = connections.first {
                CaptureInspector(includeAcks: false).inspect(connection) { record in
                    if case .message(let message) = record.kind { read.append("\(record.direction) \(message.type)#\(message.number)") }
                }
            }
            let kept = recording.records(from: 0, limit: .max).map { "\($0.direction) \($0.type)#\($0.number)" }
            #expect(!kept.isEmpty && read == kept, "the pcap holds the session's messages, in order")
            #expect(try await web.get("/api/sessions/999/capture.blipcap").status == 404)
        }
    }

    @Test func aSessionWithoutACaptureOffersNoDownload() async throws {
        try await withWebRelay(seed: ReplicatorTests.seedGateway) { web in
            let local = GatewayDatabase(name: "local")
            _ = try await web.relayed.replicator(.pull, into: local).run()
            await web.relayed.recorder.waitForClosedSessions(1)
            let id = try #require(web.history.recordings().first?.description.id)
            let sessions = try #require(try await web.json("/api/sessions")["sessions"] as? [[String: Any]])
            #expect(sessions.first { $0["id"] as? Int == Int(id) }?["capture"] as? Bool == false)
            #expect(try await web.get("/api/sessions/\(id)/capture.blipcap").status == 404)
            #expect(try await web.get("/api/sessions/\(id)/capture.pcap").status == 404)
        }
    }
}
