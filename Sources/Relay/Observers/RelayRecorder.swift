/// An observer that keeps per-session resources (capture files, a pcap): the relay tells it
/// when it starts, hands it each session's ``SessionReadGate`` as the session opens
/// (``RelayObserver/open(_:readGate:)``, so it can apply back-pressure when its storage falls
/// behind), and waits for it at shutdown.
public protocol RelayRecorder: RelayObserver {
    /// Called by ``RelayServer/start()`` before listening: create directories and files. A throw
    /// fails the start.
    func prepare() throws
    /// Called by ``RelayServer/shutdown()`` once every session has closed: write out and close
    /// everything, then return.
    func finish() async
}
