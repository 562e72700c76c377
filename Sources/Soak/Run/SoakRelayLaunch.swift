/// How the soak starts the relay under test: `blipscope relay` with these arguments, as a
/// process of its own so that its memory and descriptors can be read apart from the peers'.
public struct SoakRelayLaunch: Sendable, Equatable {
    public var echoPort: Int
    public var gatewayPort: Int
    public var adminPort: Int
    public var captureDirectory: String
    public var logFile: String
    public var captureMaxFileMiB: Int

    /// The database name routed to the embedded gateway; every other goes to the echo server.
    public static let gatewayDatabase = "soakdb"

    /// The relay's command line (after the executable): capture and admin on, the log at warning
    /// (one line per message at info would be gigabytes), decoding as always, and the heap kept
    /// compact (`--compact-heap`), as a long-running relay with many sessions should run.
    public var arguments: [String] {
        ["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(echoPort)",
         "--route", "\(Self.gatewayDatabase)=ws://127.0.0.1:\(gatewayPort)",
         "--capture", captureDirectory, "--capture-max-file-mb", String(captureMaxFileMiB),
         "--admin", "127.0.0.1:\(adminPort)", "--log-file", logFile, "--log-level", "warning", "--compact-heap"]
    }
}

/// The relay process a soak runs against.
public protocol SoakRelay: Sendable {
    /// The port it listens on for clients.
    var port: Int { get }
    /// Its process identifier (for /proc).
    var processIdentifier: Int32 { get }
    /// Stops it (SIGINT) and waits for its end.
    func stop() async
}
