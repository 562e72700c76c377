import BLIPCore
import NIOCore

/// Decodes live WebSocket BLIP traffic packet by packet, passively: the streaming counterpart of
/// ``CaptureImporter`` + ``CaptureInspector``. Feed it packets (from ``LivePcapSource`` or a
/// file) and it emits ``Output``s as soon as they are complete.
///
/// - Memory stays bounded: a connection is dropped once both sides have sent FIN (or one RST),
///   or when it has been idle for ``Configuration/idleTimeout`` (by packet time); each direction's
///   buffers are capped by ``Configuration/limits``.
/// - Roles: the SYN's sender is the client; without a SYN, the side whose port is
///   ``Configuration/serverPort`` is the server (else the lower port).
/// - A connection whose HTTP upgrade was captured is decoded fully (``ConnectionInspection``).
///   One that started before the capture is decoded by ``MidSessionDecoder``, which says what it
///   could not recover (checksum chain, compression state).
/// - Only plaintext: TLS is not decrypted. Not thread-safe.
public final class Sniffer {
    public struct Configuration: Sendable {
        public var serverPort: UInt16?
        public var limits: CaptureLimits = .default
        public var blipLimits: BLIPLimits = .default
        public var includeAcks = false
        /// Also emit a record per frame of a message that takes several (``InspectRecord/Kind/frame(number:flags:wireBytes:)``);
        /// not for a connection joined mid-session, whose decoder resynchronizes on whole messages.
        public var includeFrames = false
        /// Seconds without a packet after which a connection is forgotten.
        public var idleTimeout: Double = 600
        /// Mask secret BLIP property values in the frames of ``Output/captureRecord(connection:_:)``
        /// (``CaptureRedactor``; a connection joined mid-session cannot be checked, so its data
        /// frames are left out). False: frames as seen (`sniff --capture-secrets`). Handshake
        /// headers are always redacted; the printed records always hide secret values.
        public var redactsSecrets = true

        public init(serverPort: UInt16? = nil) { self.serverPort = serverPort }
    }

    public enum Output {
        /// A connection was recognised: its upgrade completed (`midSession` false), or its first
        /// WebSocket traffic was found without one.
        case connectionOpened(index: Int, client: Endpoint, server: Endpoint, request: HTTPRequestHead?,
                              response: HTTPResponseHead?, midSession: Bool)
        case record(InspectRecord)
        /// What a capture file of this connection should hold, in order (frames, closes, the handshake).
        case captureRecord(connection: Int, CaptureRecord)
        /// The connection was closed or timed out and forgotten.
        case connectionClosed(index: Int)
    }

    public let configuration: Configuration
    private var connections: [ConnectionKey: SniffedConnection] = [:]
    private var nextIndex = 0

    public init(configuration: Configuration) { self.configuration = configuration }

    /// Connections currently tracked.
    public var activeConnections: Int { connections.count }

    /// Takes one captured packet.
    public func receive(_ packet: PcapPacket, emit: (Output) -> Void) {
        guard case .tcp(let segment) = PacketDecoder.decode(packet) else { return }
        let key = ConnectionKey(segment.source, segment.destination)
        if connections[key] == nil {
            guard segment.payload.readableBytes > 0 || segment.flags.contains(.syn) else { return }
            connections[key] = SniffedConnection(index: nextIndex, first: segment, configuration: configuration)
            nextIndex += 1
        }
        let connection = connections[key]!
        connection.receive(segment, emit: emit)
        if connection.isFinished {
            connections[key] = nil
            emit(.connectionClosed(index: connection.index))
        }
        expireIdle(now: segment.timestamp, emit: emit)
    }

    /// Forgets every connection (end of capture).
    public func finish(emit: (Output) -> Void) {
        for connection in connections.values.sorted(by: { $0.index < $1.index }) {
            emit(.connectionClosed(index: connection.index))
        }
        connections = [:]
    }

    private func expireIdle(now: CaptureTimestamp, emit: (Output) -> Void) {
        let limit = now.secondsSince1970 - configuration.idleTimeout
        for (key, connection) in connections where connection.lastSeen.secondsSince1970 < limit {
            connections[key] = nil
            emit(.connectionClosed(index: connection.index))
        }
    }
}

/// A 4-tuple, the same in both directions.
struct ConnectionKey: Hashable {
    var low: Endpoint
    var high: Endpoint
    init(_ a: Endpoint, _ b: Endpoint) {
        (low, high) = (a.ip, a.port) < (b.ip, b.port) ? (a, b) : (b, a)
    }
}
