import BLIPCore
import BLIPNIO
import Capture
import NIOHTTP1

/// Capture records built from what the relay knows of a session, secrets redacted
/// (``HeaderRedaction``).
extension CaptureRecord {
    /// The handshake: the client's request line and headers, and the upstream's answer.
    static func handshake(of info: SessionInfo, at time: CaptureTimestamp) -> CaptureRecord {
        let request = info.request
        let requestLine = request.map { "\($0.method.rawValue) \($0.uri) \($0.version)" }
            ?? "GET \(info.target) HTTP/1.1"
        let response = info.upstreamResponse
        let address = info.clientPort.map { "\(info.clientAddress):\($0)" } ?? info.clientAddress
        return .handshake(Handshake(
            time: time, sessionID: info.id, clientAddress: address,
            requestLine: HeaderRedaction.redactRequestLine(requestLine),
            requestHeaders: HeaderRedaction.redact(fields(request?.headers)),
            upstreamURL: info.upstream + HeaderRedaction.redactTarget(info.target),
            responseStatus: response.map { Int($0.status.code) } ?? 0,
            responseReason: response?.status.reasonPhrase ?? "",
            responseHeaders: HeaderRedaction.redact(fields(response?.headers)),
            subprotocol: info.subprotocol))
    }

    /// The closes each side sent, the relay's own reason if it ended the session, in that order.
    static func closes(of summary: SessionSummary, at time: CaptureTimestamp) -> [CaptureRecord] {
        var records: [CaptureRecord] = []
        for (side, close) in [(CaptureSide.client, summary.clientClose), (.upstream, summary.upstreamClose)] {
            guard let close else { continue }
            records.append(.close(Close(time: time, side: side, code: close.abrupt ? nil : close.code,
                                        reason: close.abrupt ? "connection dropped" : close.reason)))
        }
        if let error = summary.relayError {
            records.append(.close(Close(time: time, side: .relay, code: error.closeCode, reason: error.description)))
        }
        return records
    }

    static func fields(_ headers: HTTPHeaders?) -> HTTPHeaderFields {
        HTTPHeaderFields((headers ?? [:]).map { HTTPHeaderFields.Field(name: $0.name, value: $0.value) })
    }
}
