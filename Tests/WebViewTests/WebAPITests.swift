import BLIPCore
import Foundation
import Testing
@testable import WebView

/// The routes, answered without sockets.
@Suite("Web API routes")
struct WebAPITests {
    func body(_ response: WebResponse) -> (status: Int, type: String, text: String)? {
        guard case .content(let status, let type, let body) = response else { return nil }
        return (status, type, String(decoding: body, as: UTF8.self))
    }

    @Test("the page is served from the binary's resources, its script and style inlined")
    func page() throws {
        let api = WebAPI(history: SessionHistory(), now: { 0 })
        for path in ["/", "/ui", "/ui/"] {
            let answer = try #require(body(api.respond(to: WebRequest(target: path))))
            #expect(answer.status == 200 && answer.type.hasPrefix("text/html"))
            #expect(answer.text.contains("<script>") && !answer.text.contains("/*APP_JS*/"))
            for remote in ["src=\"http", "href=\"http", "url(http", "@import", "fetch(\"http"] {
                #expect(!answer.text.contains(remote), "nothing fetched from elsewhere")
            }
        }
        #expect(body(api.respond(to: WebRequest(target: "/ui/app.js")))?.type.hasPrefix("text/javascript") == true)
        #expect(body(api.respond(to: WebRequest(target: "/ui/nothing.js")))?.status == 404)
    }

    @Test("JSON routes, feeds and what is not there")
    func routes() throws {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        let api = WebAPI(history: script.history, now: { 150 })
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions")))?.text.contains("\"sessions\":[{") == true)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1")))?.text.contains("\"id\":1") == true)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1/messages?profile=getCheckpoint")))?
            .text.contains("\"rows\":[{\"i\":0") == true)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1/messages/0")))?.text.contains("\"properties\"") == true)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1/messages/9")))?.status == 404)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/2")))?.status == 404)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1/findings")))?.status == 200)
        #expect(body(api.respond(to: WebRequest(target: "/api/docs/a%2Fb")))?.text.contains("\"doc\":\"a/b\"") == true)
        #expect(body(api.respond(to: WebRequest(target: "/api/sessions/1/capture.blipcap")))?.status == 404)
        guard case .messageFeed(let feed) = api.respond(to: WebRequest(target: "/api/sessions/1/events?after=0")) else {
            Issue.record("not a feed"); return
        }
        #expect(feed.next == 1)
        guard case .sessionsFeed = api.respond(to: WebRequest(target: "/api/events")) else { Issue.record("not a feed"); return }
        #expect(WebAPI.serves("/api/x") && WebAPI.serves("/") && !WebAPI.serves("/metrics"))
    }

    @Test("JSON text escapes what JSON must")
    func escaping() throws {
        var json = JSONText()
        json.beginObject()
        json.string("a", "q\"b\\n\n\u{1}\u{2028}é")
        json.double("nan", .nan)
        json.endObject()
        #expect(json.text == #"{"a":"q\"b\\n\n\u0001\u2028é","nan":null}"#)
        #expect(try object(json.text)["a"] as? String == "q\"b\\n\n\u{1}\u{2028}é")
    }

    @Test("live viewers beyond the limit are refused")
    func viewerSlots() {
        let slots = ViewerSlots(limit: 2)
        #expect(slots.take() && slots.take() && !slots.take())
        slots.release()
        #expect(slots.take() && slots.count == 2)
    }
}
