import Foundation
import BLIPCore
import BLIPNIO
import Mediation
import NIOCore
import NIOPosix
import Policy

/// Everything `blipscope relay` can be told, as a plain value with defaults. The CLI maps its
/// flags onto these fields one to one; the relay reads nothing else.
public struct RelayConfiguration: Sendable {
    /// Address to listen on. Port 0 picks a free port (``RelayServer/start()`` returns it).
    public var listenHost = "127.0.0.1"
    public var listenPort = 4994
    /// Where each database's traffic goes: one list of nodes for all, or lists by database name.
    public var upstream: UpstreamRouting
    /// Background health checks of the upstream nodes (off unless set; the `relay` command checks
    /// every ``UpstreamHealthChecks/defaultInterval``).
    public var upstreamChecks = UpstreamHealthChecks()
    /// Serve wss with this certificate and key; nil serves ws.
    public var serverTLS: BLIPServerTLS?
    /// Trust for wss upstreams (CA bundle, or insecure). Used only for `wss://` upstream URLs.
    public var upstreamTLS = BLIPClientTLS()
    /// Connect + upgrade to the upstream must finish within this, or the client gets 504. Runs
    /// from the client's complete request head on, apart from ``clientHandshakeTimeout``. With
    /// several nodes on a route each node tried gets this long (a node that times out is passed
    /// over for the next), so a client waits at most this times the route's nodes.
    public var upstreamHandshakeTimeout = TimeAmount.seconds(10)
    /// A client must send its whole request head within this, counted from its connection
    /// (a slow-loris guard), or it gets 408 and is disconnected. Waiting for the upstream is not
    /// counted here.
    public var clientHandshakeTimeout = TimeAmount.seconds(10)
    /// Read a PROXY protocol header (v1 or v2) at the start of every client connection and take
    /// the client's address from it (the relay behind HAProxy's `send-proxy-v2`): connection
    /// rules, logs, `/sessions`, captures and `X-Forwarded-For` then name the client, not the
    /// load balancer. A connection without an acceptable header is closed, logged and counted.
    /// Nil (the default): no header is expected, and one would be taken for a bad request.
    public var proxyProtocol: ProxyProtocolSettings?
    /// On a drain (SIGTERM, ``RelayServer/drain(timeout:)``) live sessions get this long to end by
    /// themselves before the rest are closed with 1001 (going away) to both sides. 30 s, as
    /// Kubernetes' default termination grace period, which a drain must fit within.
    public var drainTimeout = TimeAmount.seconds(30)
    /// A session with no traffic in either direction (pings included) for this long is closed
    /// with 1001 to both sides, within a quarter of this after it is due (``IdleWatch``). Nil: never.
    public var idleTimeout: TimeAmount? = .seconds(900)
    /// TCP keepalive on the client's and the upstream's connection; nil: the kernel's default
    /// (off). A silent dead peer is then found in about a minute and a half, not at the idle timeout.
    public var tcpKeepAlive: TCPKeepAlive? = .default
    /// After a CLOSE has been passed on, how long to wait for the closing handshake to finish
    /// before dropping both connections.
    public var closeTimeout = TimeAmount.seconds(5)
    /// Close a session (1011, with the reason) on the first BLIP decoding error, instead of
    /// logging it and forwarding unchanged.
    public var strict = false
    /// Decode, analyse and log each message as it passes (the default). Off, a pass-through
    /// session only forwards, counts bytes and frames and gives captures their frames (which
    /// `blipscope inspect` decodes later): no message lines, analysis, message metrics or web-view
    /// messages, at about the CPU of a blind proxy. Goes with neither ``strict`` nor a mediation
    /// policy, which decode to decide (the `relay` command refuses those combinations).
    public var decodes = true
    /// How sessions and messages are logged.
    public var logFormat = LogFormat.text
    /// Replace document bodies in logs with their size and a hash.
    public var redactBodies = false
    /// Buffer, frame and decoder limits.
    public var limits = RelayLimits()
    /// The policy's clock, in nanoseconds on the monotonic scale of `NIODeadline` (token buckets,
    /// handshake rates, bandwidth and withheld-ACK holds). Tests give a fixed one, so what a rate
    /// limit or a bandwidth rule does does not depend on how loaded the machine is.
    public var policyClock: @Sendable () -> UInt64 = PolicyClock.now
    /// Makes each session's mediation policy (nil for a session the relay only forwards). Nil here,
    /// the default: every session is pass-through, byte for byte, with no decoding before forwarding.
    /// With a policy the relay decodes each frame before forwarding it and re-encodes a direction
    /// from its first intervention on (ARCHITECTURE.md "The one protocol fact").
    public var mediationPolicy: (@Sendable (SessionInfo) -> (any MediationPolicy)?)? = nil
    /// Limits of mediating sessions (frame size of the relay's own frames, deflate level, bytes held
    /// for timers per direction before reading pauses).
    public var mediationLimits = MediationLimits()
    /// Event loop threads when the relay makes its own group (``RelayServer`` callers may pass one).
    public var eventLoopThreads = System.coreCount
    /// Pin one event loop to each of these CPUs instead (``CPUAffinity``); nil lets the kernel
    /// place ``eventLoopThreads`` threads.
    public var cpuAffinity: CPUAffinity?

    /// The event loop group a relay process runs on: pinned when ``cpuAffinity`` is set.
    public func makeEventLoopGroup() -> MultiThreadedEventLoopGroup {
        cpuAffinity?.makeEventLoopGroup() ?? MultiThreadedEventLoopGroup(numberOfThreads: eventLoopThreads)
    }

    public enum LogFormat: String, Sendable, CaseIterable {
        case text, json

        /// The line (no newline) a ``LogLineSink`` writes in this format where it dropped `lines`
        /// lines of `bytes` bytes because its reader fell more than `limit` bytes behind:
        /// `event=log-dropped`.
        public func logDroppedLine(lines: Int, bytes: Int, limit: Int) -> String {
            LogLine(format: self, redactBodies: false, withBody: false).logDropped(lines: lines, bytes: bytes, limit: limit).finish()
        }
    }

    // MARK: capture (GitHub issue 6)

    /// Write one capture file per session (``CaptureObserver``) into this directory (created if
    /// missing); nil captures nothing.
    public var captureDirectory: String?
    /// The `<run>` that starts this relay's capture file names (`<run>-<session>-<part>.blipcap`):
    /// its start time and process id, so that runs sharing a directory never share a file.
    public var captureRun = RelayConfiguration.makeCaptureRun()
    /// Start a new part of a session's capture once a file holds this many bytes; nil never rotates.
    public var captureMaxFileBytes: Int?
    /// What to do when the disk does not keep up with a session's capture.
    public var captureOverflow = CaptureOverflowPolicy.backPressure
    /// Write every session's client leg into this pcap file (``PcapObserver``); nil writes none.
    public var pcapPath: String?
    /// Record secret BLIP property values as sent in capture files and the pcap. Off by default:
    /// they are masked inside the frame bytes (``CaptureRedactor``) and handshake headers are
    /// redacted (``HeaderRedaction``, always).
    public var captureSecrets = false

    /// When capture records arrive faster than they can be written.
    public enum CaptureOverflowPolicy: String, Sendable, CaseIterable {
        /// Stop reading from the session's peers until the capture has drained: nothing is lost.
        case backPressure = "backpressure"
        /// Keep relaying, drop the records that do not fit, and record how many were dropped.
        case drop
    }

    // MARK: policy (GitHub issue 7)

    /// The policy in force (reloadable); nil applies none. Connection rules are checked at each
    /// client's handshake, before the upstream is dialed.
    public var policy: PolicyStore?
    /// Log what the policy would do and do nothing (`--policy-dry-run`). The store is built with
    /// the same flag, which marks every verdict it returns as dry-run.
    public var policyDryRun = false

    public init(upstream: UpstreamRouting) {
        self.upstream = upstream
    }
}

extension RelayConfiguration {
    /// `<start time in seconds>-<process id>`.
    public static func makeCaptureRun() -> String {
        "\(Int(Date().timeIntervalSince1970))-\(ProcessInfo.processInfo.processIdentifier)"
    }
}
