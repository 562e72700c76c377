import BLIPCore

/// The frames and ACKs that carried one message, as compact numbers (formatted only when a
/// viewer opens the message). Only messages of more than one frame, or that were ACKed, have
/// one: a message whole in one frame is described by its record alone.
///
/// Bounded: at most ``WebViewLimits/maxFramesPerMessage`` frames and as many ACKs are kept; the
/// rest are counted (``framesNotKept``, ``acksNotKept``) and their bytes still summed.
public struct MessageCarriage: Sendable, Equatable {
    /// One frame that had MoreComing set (the message's last frame is made from its record).
    public struct Frame: Sendable, Equatable {
        /// Seconds on the session's clock when the relay passed it on.
        public var time: Double
        /// The whole BLIP frame: header, payload as sent, checksum.
        public var wireBytes: Int32
        public var flags: UInt8
    }

    /// One ACK for the message, sent by its receiver.
    public struct Ack: Sendable, Equatable {
        public var time: Double
        /// The byte count it acknowledges (BLIP §5: frame bytes received so far).
        public var bytes: UInt64
        /// The side that sent the ACK (the message's receiver).
        public var from: BLIPDirection
    }

    /// Frames before the last, oldest first, at most the limit.
    public var frames: [Frame] = []
    public var framesNotKept = 0
    /// Sum of ``Frame/wireBytes`` over every frame before the last, kept or not.
    public var earlierWireBytes = 0
    /// Frames before the last, kept or not.
    public var earlierFrames = 0
    public var acks: [Ack] = []
    public var acksNotKept = 0

    public init() {}

    mutating func add(frame: Frame, limit: Int) {
        earlierFrames += 1
        earlierWireBytes += Int(frame.wireBytes)
        if frames.count < limit { frames.append(frame) } else { framesNotKept += 1 }
    }

    mutating func add(ack: Ack, limit: Int) {
        if acks.count < limit { acks.append(ack) } else { acksNotKept += 1 }
    }

    /// Bytes of a uvarint.
    static func uvarintSize(_ value: UInt64) -> Int {
        var value = value, size = 1
        while value >= 0x80 { value >>= 7; size += 1 }
        return size
    }

    /// The last frame of `record`'s message: its time and flags are the message's, its size what
    /// the message's payload left after the earlier frames (header and checksum added).
    static func lastFrame(of record: MessageRecord, carriage: MessageCarriage?) -> Frame {
        let number = UInt64(record.number)
        let flags = record.flags.rawValue & ~FrameFlags.moreComing
        var payload = record.wireBytes
        if let carriage, carriage.earlierFrames > 0 {
            let earlierHeader = uvarintSize(number) + uvarintSize(UInt64(flags | FrameFlags.moreComing)) + 4
            payload -= carriage.earlierWireBytes - carriage.earlierFrames * earlierHeader
        }
        let wire = uvarintSize(number) + uvarintSize(UInt64(flags)) + max(0, payload) + 4
        return Frame(time: record.time, wireBytes: Int32(clamping: wire), flags: flags)
    }
}
