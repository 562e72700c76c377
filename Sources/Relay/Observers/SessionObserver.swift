/// One session's handler of a ``RelayObserver``: made once, as the session opens
/// (``RelayObserver/open(_:readGate:)``), and fed that session's events on its event loop. It
/// holds what its observer keeps of the session (a metrics track, a web view recording, a
/// capture file) by reference, so no event looks the session up in a relay-wide table or takes
/// the observer's lock: relay-wide state is touched when the session opens and when it closes.
/// Confined to the session's event loop.
public protocol SessionObserver: AnyObject {
    func observe(_ event: RelayEvent)
    /// A complete message, lent for the call (see ``RelayObserver/observe(message:)``).
    func observe(message event: borrowing MessageEvent)
    /// The session finished one input (a read, a timer, a close): every event of it has been
    /// delivered. A handler that collects per event (log lines, counts, records) hands what it
    /// collected on here, once per batch instead of once per message.
    func batchEnded()
}

extension SessionObserver {
    public func observe(message event: borrowing MessageEvent) { observe(.message(copy event)) }
    public func batchEnded() {}
}
