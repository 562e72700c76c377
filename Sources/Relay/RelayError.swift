import BLIPCore
import NIOHTTP1

/// The one error type of the relay. Each error says, in exactly one place, which HTTP status it
/// answers a handshake with and which WebSocket close code it ends a session with
/// (wire-format reference §1.2 for handshake failures, §7 for close codes).
public struct RelayError: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case notFound(path: String)
        case notAnUpgrade
        /// `Sec-WebSocket-Version` other than 13 (RFC 6455 §4.4): 426 naming 13.
        case unsupportedWebSocketVersion(String)
        case noBLIPProtocol(offered: [String])
        case unknownDatabase(String)
        case upstreamUnreachable(String)
        case upstreamTimeout
        case upstreamHandshake(String)
        /// A background `GET /` of a node got no passing answer (the text says what it got).
        case upstreamCheckFailed(String)
        case clientHandshakeTimeout
        case frameTooLarge
        case webSocketProtocol(String)
        case decodeFailed(BLIPError, BLIPDirection)
        case decoderBudgetExceeded(Int)
        case idleTimeout
        case closeTimeout
        case shuttingDown
        case captureFailed(String)
        case adminTokenRequired(host: String)
        /// A policy `close` fault: end the session with this code (1006: drop without CLOSE).
        case policyClose(code: UInt16, reason: String)
        /// A setting the relay cannot start with (named in the text).
        case configuration(String)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// The status a client gets when its handshake fails for this reason.
    public var httpStatus: HTTPResponseStatus {
        switch kind {
        case .notFound, .unknownDatabase: return .notFound
        case .notAnUpgrade, .noBLIPProtocol: return .badRequest
        case .unsupportedWebSocketVersion: return .upgradeRequired
        case .upstreamUnreachable, .upstreamHandshake: return .badGateway
        case .upstreamTimeout: return .gatewayTimeout
        case .clientHandshakeTimeout: return .requestTimeout
        case .shuttingDown: return .serviceUnavailable
        default: return .internalServerError
        }
    }

    /// Headers the refusal carries besides its text: 426 names the version the relay speaks.
    var responseHeaders: HTTPHeaders {
        guard case .unsupportedWebSocketVersion = kind else { return [:] }
        return ["Sec-WebSocket-Version": "13"]
    }

    /// The CLOSE code a session ends with for this reason.
    public var closeCode: UInt16 {
        switch kind {
        case .frameTooLarge: return 1009
        case .webSocketProtocol: return 1002
        case .idleTimeout, .closeTimeout, .shuttingDown: return 1001
        case .policyClose(let code, _): return code
        default: return 1011
        }
    }

    /// True when the problem lies with the upstream rather than the client or the relay.
    public var isUpstreamFailure: Bool { upstreamFailure != nil }

    /// How dialling the upstream failed, when that is this error's cause.
    public var upstreamFailure: UpstreamFailure? {
        switch kind {
        case .upstreamUnreachable: return .unreachable
        case .upstreamTimeout: return .timeout
        case .upstreamHandshake: return .handshake
        default: return nil
        }
    }

    /// A stable key for metrics and tests.
    public var code: String {
        switch kind {
        case .notFound: return "not_found"
        case .notAnUpgrade: return "not_an_upgrade"
        case .unsupportedWebSocketVersion: return "unsupported_websocket_version"
        case .noBLIPProtocol: return "no_blip_protocol"
        case .unknownDatabase: return "unknown_database"
        case .upstreamUnreachable: return "upstream_unreachable"
        case .upstreamTimeout: return "upstream_timeout"
        case .upstreamHandshake: return "upstream_handshake"
        case .upstreamCheckFailed: return "upstream_check_failed"
        case .clientHandshakeTimeout: return "client_handshake_timeout"
        case .frameTooLarge: return "frame_too_large"
        case .webSocketProtocol: return "websocket_protocol"
        case .decodeFailed: return "decode_failed"
        case .decoderBudgetExceeded: return "decoder_budget_exceeded"
        case .idleTimeout: return "idle_timeout"
        case .closeTimeout: return "close_timeout"
        case .shuttingDown: return "shutting_down"
        case .captureFailed: return "capture_failed"
        case .adminTokenRequired: return "admin_token_required"
        case .policyClose: return "policy_close"
        case .configuration: return "configuration"
        }
    }

    public var description: String {
        switch kind {
        case .notFound(let path):
            return "no BLIP endpoint at \(path); the relay serves /{db}/_blipsync"
        case .notAnUpgrade:
            return "expected a WebSocket upgrade request (Upgrade: websocket, Connection: Upgrade)"
        case .unsupportedWebSocketVersion(let version):
            return "WebSocket version \(version) is not supported; use 13"
        case .noBLIPProtocol(let offered):
            let shown = offered.isEmpty ? "no Sec-WebSocket-Protocol" : "Sec-WebSocket-Protocol " + offered.joined(separator: ",")
            return "offered \(shown); this relay speaks BLIP_3+CBMobile_2, BLIP_3+CBMobile_3, BLIP_3+CBMobile_4 (any BLIP_3+…)"
        case .unknownDatabase(let name):
            return "no upstream configured for database \"\(name)\""
        case .upstreamUnreachable(let detail):
            return "upstream unreachable: \(detail)"
        case .upstreamTimeout:
            return "upstream did not complete the WebSocket handshake in time"
        case .upstreamHandshake(let detail):
            return "upstream handshake failed: \(detail)"
        case .upstreamCheckFailed(let detail):
            return "health check failed: \(detail)"
        case .clientHandshakeTimeout:
            return "client did not send its upgrade request in time"
        case .frameTooLarge:
            return "WebSocket frame over the relay's size limit"
        case .webSocketProtocol(let detail):
            return "WebSocket protocol error: \(detail)"
        case .decodeFailed(let error, let direction):
            return "BLIP decoding failed (\(direction == .clientToServer ? "C→U" : "U→C")): \(error.description)"
        case .decoderBudgetExceeded(let bytes):
            return "partly received messages exceed the decoder budget of \(bytes) bytes"
        case .idleTimeout:
            return "session idle timeout"
        case .closeTimeout:
            return "closing handshake did not finish in time"
        case .shuttingDown:
            return "relay shutting down"
        case .captureFailed(let detail):
            return "capture failed: \(detail)"
        case .policyClose(let code, let reason):
            return "policy closed the session with \(code)" + (reason.isEmpty ? "" : ": \(reason)")
        case .adminTokenRequired(let host):
            return "the admin listener on \(host) is not loopback: give it a bearer token (--admin-token)"
        case .configuration(let detail):
            return detail
        }
    }
}
