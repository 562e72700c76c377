import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOHTTP1

/// The client role: dials a target database and replays the recorded client's requests on a new
/// connection (fresh numbering and codecs), answering the target's own requests (changes, rev,
/// getAttachment …) with the recorded client's replies.
///
/// Offers the recorded client's sub-protocols in its order (the recorded choice when the offer
/// was not captured) and sends the recorded request headers through ``ReplaySubstitutions``:
/// credentials go out with the first request, without waiting for a 401 challenge.
public enum ReplayClient {
    /// Replays `script` (a client-side script) against `target`, `ws[s]://host[:port]/db`
    /// (`/_blipsync` is appended unless present). Throws when the target cannot be reached or
    /// refuses the upgrade; everything after that ends up in the report.
    public static func run(_ script: ReplayScript, session: Int = 0, target: String,
                           configuration: ReplayConfiguration, group: EventLoopGroup) async throws(ReplayError) -> ReplayReport {
        var client = try dialConfiguration(script, target: target, configuration: configuration)
        let eventLoop = group.next()
        let inbox = ReplayInbox(eventLoop: eventLoop)
        let responder = PeerResponder(script: script, allowances: configuration.allowances, inbox: inbox)
        client.onRequest = { request, handler in responder.handle(request, from: handler) }
        let outcome: BLIPWebSocketClient.Outcome
        do {
            outcome = try await BLIPWebSocketClient.connect(client, group: eventLoop)
        } catch {
            throw .connection("\(client.host):\(client.port): \(error)")
        }
        switch outcome {
        case .refused(let status, _, let body):
            throw .refused(status: Int(status.code), body: body)
        case .connected(let connection):
            connection.closed.whenComplete { result in
                inbox.push(.closed(code: (try? result.get()).flatMap { $0.abrupt ? nil : $0.code }))
            }
            let driver = ReplayDriver(script: script, session: session, configuration: configuration,
                                      connection: connection, responder: responder)
            return await driver.run()
        }
    }

    /// The WebSocket client settings for `target`.
    static func dialConfiguration(_ script: ReplayScript, target: String,
                                  configuration: ReplayConfiguration) throws(ReplayError) -> BLIPWebSocketClient.Configuration {
        guard let url = URLComponents(string: target), let scheme = url.scheme?.lowercased(),
              ["ws", "wss", "http", "https"].contains(scheme), let host = url.host, !host.isEmpty else {
            throw .invalidOption("--target \(target) is not a ws:// or wss:// database URL")
        }
        let secure = scheme == "wss" || scheme == "https"
        var path = url.percentEncodedPath
        if path.hasSuffix("/") { path.removeLast() }
        guard !path.isEmpty else { throw .invalidOption("--target \(target) names no database") }
        if !path.hasSuffix("/_blipsync") { path += "/_blipsync" }
        if let query = url.percentEncodedQuery { path += "?" + query }
        var client = BLIPWebSocketClient.Configuration()
        client.host = host
        client.port = url.port ?? (secure ? 443 : 80)
        client.path = path
        client.tls = secure ? BLIPClientTLS() : nil
        client.limits = configuration.limits
        let offered = script.handshake.offeredSubprotocols
        if !offered.isEmpty {
            client.subprotocols = offered
        } else if let chosen = script.handshake.subprotocol {
            client.subprotocols = [chosen]
        }
        var headers = HTTPHeaders()
        for field in configuration.substitutions.handshakeHeaders(recorded: script.handshake.requestHeaders) {
            headers.add(name: field.name, value: field.value)
        }
        client.headers = headers
        return client
    }
}
