/// The flags byte of a frame: the type in the low 3 bits plus four flag bits (wire-format
/// reference §2.1). Readers keep only the low 8 bits of the flags varint, as both peers do.
public struct FrameFlags: Sendable, Hashable, CustomStringConvertible {
    public static let typeMask: UInt8 = 0x07
    public static let compressed: UInt8 = 0x08
    public static let urgent: UInt8 = 0x10
    public static let noReply: UInt8 = 0x20
    public static let moreComing: UInt8 = 0x40

    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(type: MessageType, compressed: Bool = false, urgent: Bool = false,
                noReply: Bool = false, moreComing: Bool = false) {
        var raw = type.rawValue
        if compressed { raw |= Self.compressed }
        if urgent { raw |= Self.urgent }
        if noReply { raw |= Self.noReply }
        if moreComing { raw |= Self.moreComing }
        self.rawValue = raw
    }

    /// The type, or nil for the undefined values 3, 6 and 7.
    @inlinable public var type: MessageType? { MessageType(rawValue: rawValue & Self.typeMask) }
    @inlinable public var isCompressed: Bool {
        get { rawValue & Self.compressed != 0 }
        set { set(Self.compressed, newValue) }
    }
    @inlinable public var isUrgent: Bool {
        get { rawValue & Self.urgent != 0 }
        set { set(Self.urgent, newValue) }
    }
    @inlinable public var isNoReply: Bool {
        get { rawValue & Self.noReply != 0 }
        set { set(Self.noReply, newValue) }
    }
    @inlinable public var hasMoreComing: Bool {
        get { rawValue & Self.moreComing != 0 }
        set { set(Self.moreComing, newValue) }
    }

    @inlinable mutating func set(_ bit: UInt8, _ on: Bool) {
        rawValue = on ? rawValue | bit : rawValue & ~bit
    }

    /// The flag letters as the inspector prints them: `Z` compressed, `U` urgent, `N` noreply,
    /// `M` more coming; `-` when none is set.
    public var description: String {
        var letters = ""
        if isCompressed { letters += "Z" }
        if isUrgent { letters += "U" }
        if isNoReply { letters += "N" }
        if hasMoreComing { letters += "M" }
        return letters.isEmpty ? "-" : letters
    }
}
