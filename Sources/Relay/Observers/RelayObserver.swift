/// What kinds of events an observer wants; the relay builds only those.
public struct RelayEventInterests: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Open, close, refused handshakes, flow control.
    public static let sessions = RelayEventInterests(rawValue: 1)
    /// Message heads, complete messages, decode errors.
    public static let messages = RelayEventInterests(rawValue: 2)
    /// Every frame and ACK.
    public static let frames = RelayEventInterests(rawValue: 4)
    public static let all: RelayEventInterests = [.sessions, .messages, .frames]
}

/// Watches sessions (logging, metrics, capture, tests). Called synchronously on the session's
/// event loop *after* the traffic it describes was forwarded: it must return quickly and never
/// block. An observer that needs to do slow work hands the event to its own queue.
public protocol RelayObserver: Sendable {
    var interests: RelayEventInterests { get }
    func observe(_ event: RelayEvent)
}

/// The observers of a relay, with their interests folded together once.
struct ObserverSet: Sendable {
    let observers: [any RelayObserver]
    let interests: RelayEventInterests

    init(_ observers: [any RelayObserver]) {
        self.observers = observers
        self.interests = observers.reduce(into: []) { $0.formUnion($1.interests) }
    }

    @inline(__always) func wants(_ kind: RelayEventInterests) -> Bool { interests.contains(kind) }

    func emit(_ event: RelayEvent, kind: RelayEventInterests) {
        for observer in observers where observer.interests.contains(kind) { observer.observe(event) }
    }
}
