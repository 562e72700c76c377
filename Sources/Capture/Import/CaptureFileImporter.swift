import BLIPCore
import Foundation
import NIOCore

/// A session read back from BlipScope capture files, in the shape the pcap importer produces, so
/// ``CaptureInspector`` and ``PcapExporter`` treat both sources alike.
public struct CaptureFileImport: Sendable {
    /// How one file of the session ended.
    public struct FileSummary: Sendable, Hashable {
        public var path: String
        public var header: CaptureFileHeader
        public var ending: CaptureReader.Ending
        public var records: Int
        public var migratedRecords: Int
        public var skippedRecords: Int
        /// Damaged stretches the reader skipped (``CaptureReader/damage``).
        public var damage: [CaptureReader.DamagedRange] = []
    }

    /// Connection 0 is the client ⇄ relay leg. When some frames were recorded on one leg only
    /// (the relay re-encoded a direction), connection 1 is the relay ⇄ upstream leg.
    public var connections: [CapturedConnection] = []
    public var handshake: CaptureRecord.Handshake?
    public var messageHeads: [CaptureRecord.MessageHeadRecord] = []
    public var verdicts: [CaptureRecord.Verdict] = []
    public var dropped: [CaptureRecord.Dropped] = []
    public var closes: [CaptureRecord.Close] = []
    public var notes: [(time: CaptureTimestamp, text: String)] = []
    public var files: [FileSummary] = []

    /// Records the writer's owner reported as dropped, all files together.
    public var droppedRecordCount: UInt64 { dropped.reduce(0) { $0 + $1.count } }
}

/// Reads a session's capture files (one, or its rotated parts in order).
public enum CaptureFileImporter {
    /// Reads `paths` in order as one session. A handshake repeated at the start of a later part
    /// (see ``CaptureRotation``) is skipped.
    public static func importSession(paths: [String]) throws -> CaptureFileImport {
        var result = CaptureFileImport()
        var frames: [(record: CaptureRecord.Frame, index: Int)] = []
        var closeIndices: [Int] = []
        var recordIndex = 0
        for path in paths {
            let reader = try CaptureReader(path: path)
            while let record = try reader.next() {
                defer { recordIndex += 1 }
                switch record {
                case .handshake(let handshake):
                    if result.handshake == nil { result.handshake = handshake }
                case .frame(let frame): frames.append((frame, recordIndex))
                case .messageHead(let head): result.messageHeads.append(head)
                case .verdict(let verdict): result.verdicts.append(verdict)
                case .dropped(let dropped): result.dropped.append(dropped)
                case .close(let close):
                    result.closes.append(close)
                    closeIndices.append(recordIndex)
                case .note(let time, let text): result.notes.append((time, text))
                }
            }
            result.files.append(.init(
                path: path, header: reader.header, ending: reader.ending ?? .clean, records: reader.recordsRead,
                migratedRecords: reader.migratedRecords, skippedRecords: reader.skippedRecords, damage: reader.damage
            ))
        }
        let splitLegs = frames.contains { $0.record.leg != .both }
        let legs: [CaptureLeg] = splitLegs ? [.client, .upstream] : [.client]
        for leg in legs {
            var connection = SessionEndpoints.connection(
                index: result.connections.count, leg: leg, handshake: result.handshake
            )
            var events: [CapturedEvent] = []
            var closes = zip(result.closes, closeIndices).makeIterator()
            var nextClose = closes.next()
            for (frame, index) in frames where frame.leg.appears(on: leg) {
                while let close = nextClose, close.1 < index {
                    events.append(closeEvent(close.0, index: close.1, leg: leg))
                    nextClose = closes.next()
                }
                let direction: CaptureDirection = frame.direction == .clientToServer ? .clientToServer : .serverToClient
                events.append(CapturedEvent(time: frame.time, direction: direction,
                                            kind: .message(opcode: 2, payload: frame.bytes), packetIndex: index))
                if direction == .clientToServer {
                    connection.clientToServerBytes += Int64(frame.bytes.readableBytes)
                } else {
                    connection.serverToClientBytes += Int64(frame.bytes.readableBytes)
                }
            }
            while let close = nextClose {
                events.append(closeEvent(close.0, index: close.1, leg: leg))
                nextClose = closes.next()
            }
            connection.events = events
            result.connections.append(connection)
        }
        return result
    }

    /// A close record as the WebSocket close it stands for on `leg`: the client's and the
    /// upstream's travel their own way; the relay's goes towards the peer of that leg.
    private static func closeEvent(_ close: CaptureRecord.Close, index: Int, leg: CaptureLeg) -> CapturedEvent {
        let direction: CaptureDirection
        switch close.side {
        case .client: direction = .clientToServer
        case .upstream: direction = .serverToClient
        case .relay: direction = leg == .upstream ? .clientToServer : .serverToClient
        }
        return CapturedEvent(time: close.time, direction: direction,
                             kind: .close(code: close.code, reason: close.reason), packetIndex: index)
    }
}

/// Reads the capture file at `path` and, when it is part 1 of a rotated session
/// (`<session>-1.blipcap`), the parts that follow it.
public func importConnections(fromCaptureFileAt path: String) throws -> CaptureFileImport {
    try CaptureFileImporter.importSession(paths: CaptureRotation.partsStarting(at: path))
}
