import BLIPTestSupport
import Foundation
import Testing

/// Every option that names a file, an address or a number, given a bad value as a user would:
/// the command ends before anything listens, with one `Error:` line naming the option, the value
/// and the cause in words, then what to give instead — never the TLS or file library's case
/// names, and never the usage lines, which are for a mistyped command line.
@Suite("what a bad option value says")
struct OptionMessagesTests {
    /// Files the cases point at: a text file that is no PEM, and a directory.
    static let scratch: String = {
        let directory = NSTemporaryDirectory() + "blipscope-options-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory + "/a-directory", withIntermediateDirectories: true)
        try? "not a certificate\n".write(toFile: directory + "/text.txt", atomically: true, encoding: .utf8)
        return directory
    }()

    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        /// The first line of the standard error output, after `Error: `.
        var cause: String
        /// Words the next line (what to give) holds.
        var hint: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static var text: String { scratch + "/text.txt" }
    static var directory: String { scratch + "/a-directory" }

    static let cases: [Case] = [
        // Files
        Case(arguments: ["relay", "--upstream", "wss://127.0.0.1:1", "--upstream-ca", "/nonexistent/ca.pem"],
             cause: "--upstream-ca /nonexistent/ca.pem: no such file", hint: "PEM file of the CA certificates"),
        Case(arguments: ["relay", "--upstream-ca", text], cause: "--upstream-ca \(text) holds no PEM certificate", hint: "CA certificates"),
        Case(arguments: ["relay", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"],
             cause: "--tls-cert /nonexistent/cert.pem: no such file", hint: "server's certificate"),
        Case(arguments: ["relay", "--tls-cert", text, "--tls-key", text], cause: "--tls-cert \(text) holds no PEM certificate",
             hint: "server's certificate"),
        Case(arguments: ["relay", "--tls-cert", directory, "--tls-key", text],
             cause: "--tls-cert \(directory): is a directory, not a file", hint: "server's certificate"),
        Case(arguments: ["relay", "--tls-cert", text], cause: "--tls-cert and --tls-key go together", hint: "both PEM files"),
        Case(arguments: ["relay", "--admin", "127.0.0.1:0", "--admin-tls-cert", "/nonexistent/cert.pem", "--admin-tls-key", "/nonexistent/key.pem"],
             cause: "--admin-tls-cert /nonexistent/cert.pem: no such file", hint: "server's certificate"),
        Case(arguments: ["relay", "--admin", "127.0.0.1:0", "--admin-tls-cert", text, "--admin-tls-key", text],
             cause: "--admin-tls-cert \(text) holds no PEM certificate", hint: "server's certificate"),
        Case(arguments: ["relay", "--admin", "127.0.0.1:0", "--admin-tls-cert", text],
             cause: "--admin-tls-cert and --admin-tls-key go together", hint: "both PEM files"),
        Case(arguments: ["relay", "--log-file", "/nonexistent/relay.log"],
             cause: "--log-file /nonexistent/relay.log: the directory /nonexistent does not exist", hint: "log file"),
        Case(arguments: ["relay", "--log-file", directory], cause: "--log-file \(directory): is a directory", hint: "log file"),
        Case(arguments: ["relay", "--pcap", "/nonexistent/out.pcap"],
             cause: "--pcap /nonexistent/out.pcap: the directory /nonexistent does not exist", hint: "pcap file"),
        Case(arguments: ["relay", "--capture", text + "/sessions"], cause: "--capture \(text)/sessions: \(text) is a file, not a directory",
             hint: "directory for the capture files"),
        Case(arguments: ["relay", "--policy", "/nonexistent/policy.yaml"], cause: "--policy /nonexistent/policy.yaml: no such file",
             hint: "policy file"),
        Case(arguments: ["relay", "--admin", "127.0.0.1:0", "--sg-log", "/nonexistent/sg.log"],
             cause: "--sg-log /nonexistent/sg.log: no such file", hint: "Sync Gateway log file"),
        Case(arguments: ["inspect", "/nonexistent/session.blipcap"], cause: "cannot read /nonexistent/session.blipcap", hint: ".blipcap"),
        Case(arguments: ["web", "/nonexistent/session.blipcap"], cause: "cannot read /nonexistent/session.blipcap", hint: ".blipcap"),
        Case(arguments: ["export", text, "--pcap", "/tmp/out.pcap"], cause: "\(text) is neither a BlipScope capture file nor a pcap",
             hint: ".blipcap"),
        Case(arguments: ["gateway", "--load", "/nonexistent/docs.json"], cause: "--load /nonexistent/docs.json: no such file",
             hint: "JSON file of documents"),
        Case(arguments: ["gateway", "--users", "/nonexistent/users.json"], cause: "--users /nonexistent/users.json: no such file",
             hint: "JSON file of users"),
        Case(arguments: ["gateway", "--tls-cert", text, "--tls-key", text], cause: "--tls-cert \(text) holds no PEM certificate",
             hint: "server's certificate"),
        Case(arguments: ["replicate", "wss://127.0.0.1:1/db", "--pull", "--ca-bundle", "/nonexistent/ca.pem"],
             cause: "--ca-bundle /nonexistent/ca.pem: no such file", hint: "CA certificates"),
        Case(arguments: ["replicate", "ws://127.0.0.1:1/db", "--push", "--load", directory],
             cause: "--load \(directory): is a directory, not a file", hint: "JSON file of documents"),
        Case(arguments: ["demo", "--docs", "/nonexistent/docs.json"], cause: "--docs /nonexistent/docs.json: no such file",
             hint: "JSON file of documents"),
        // URLs and addresses
        Case(arguments: ["relay", "--upstream", "http://sg:4984"], cause: "--upstream http://sg:4984: http:// is not a WebSocket URL",
             hint: "ws://HOST:PORT"),
        Case(arguments: ["relay", "--upstream", "sg:4984"], cause: "--upstream sg:4984: not a URL", hint: "ws://HOST:PORT"),
        Case(arguments: ["relay", "--route", "db=ftp://sg"], cause: "--route db=ftp://sg: ftp:// is not ws:// or wss://", hint: "DB=ws://HOST:PORT"),
        Case(arguments: ["relay", "--route", "ws://sg:4984"], cause: "--route ws://sg:4984: no database name", hint: "DB=ws://HOST:PORT"),
        Case(arguments: ["relay", "--route", "db=ws://sg1:4984,sg2:4984"], cause: "--route db=ws://sg1:4984,sg2:4984: not a URL",
             hint: "several separated by commas"),
        Case(arguments: ["relay", "--upstream", "ws://sg1:4984", "--upstream", "https://sg2:4984"],
             cause: "--upstream https://sg2:4984: https:// is not a WebSocket URL", hint: "ws://HOST:PORT"),
        Case(arguments: ["relay", "--upstream-fall", "0"], cause: "--upstream-fall 0: must be at least 1", hint: "give 1 or more"),
        Case(arguments: ["relay", "--upstream-check-interval", "7200"], cause: "--upstream-check-interval 7200.0: out of range",
             hint: "0 (no checks)"),
        Case(arguments: ["relay", "--listen", "127.0.0.1"], cause: "--listen 127.0.0.1: no port", hint: "HOST:PORT"),
        Case(arguments: ["relay", "--listen", "127.0.0.1:99999"], cause: "--listen 127.0.0.1:99999: 99999 is not a port (0 to 65535)",
             hint: "HOST:PORT"),
        Case(arguments: ["relay", "--admin", "localhost:http"], cause: "--admin localhost:http: http is not a port (0 to 65535)",
             hint: "HOST:PORT"),
        Case(arguments: ["gateway", "--listen", ":x"], cause: "--listen :x: x is not a port (0 to 65535)", hint: "HOST:PORT"),
        Case(arguments: ["web", text, "--listen", "127.0.0.1"], cause: "--listen 127.0.0.1: no port", hint: "HOST:PORT"),
        Case(arguments: ["replicate", "http://127.0.0.1:4984/db", "--pull"],
             cause: "the URL http://127.0.0.1:4984/db: http:// is not a WebSocket URL", hint: "ws://HOST:PORT/DB"),
        // Numbers
        Case(arguments: ["relay", "--threads", "0"], cause: "--threads 0: must be at least 1", hint: "1 or more"),
        Case(arguments: ["relay", "--handshake-timeout", "0"], cause: "--handshake-timeout 0: must be at least 1 s", hint: "1 s or more"),
        Case(arguments: ["relay", "--client-header-timeout", "0"], cause: "--client-header-timeout 0: must be at least 1 s",
             hint: "1 s or more"),
        Case(arguments: ["relay", "--drain-timeout=-1"], cause: "--drain-timeout -1: must be at least 0 s", hint: "0 s or more"),
        Case(arguments: ["relay", "--proxy-protocol", "--proxy-header-timeout", "0"],
             cause: "--proxy-header-timeout 0: must be at least 1 s", hint: "1 s or more"),
        Case(arguments: ["relay", "--log-backlog-kib", "0"], cause: "--log-backlog-kib 0: must be at least 1 KiB", hint: "1 KiB or more"),
        Case(arguments: ["relay", "--capture", directory, "--capture-max-file-mb", "0"],
             cause: "--capture-max-file-mb 0: must be at least 1 MiB", hint: "1 MiB or more"),
        Case(arguments: ["relay", "--inspection-delay-ms", "5000"], cause: "--inspection-delay-ms 5000.0: out of range",
             hint: "0 to 1000 milliseconds"),
        Case(arguments: ["relay", "--inspection-batch", "64,0"], cause: "--inspection-batch 64,0: not FRAMES or FRAMES,KIB",
             hint: "at least 1 frame"),
        Case(arguments: ["relay", "--cpus", "x"], cause: "--cpus: CPU list \"x\"", hint: "CPU numbers"),
        // The fleet's Redis
        Case(arguments: ["relay", "--redis", "http://127.0.0.1:6379"],
             cause: "--redis http://127.0.0.1:6379: has the scheme http://, not redis:// or rediss://", hint: "redis://[:PASSWORD@]HOST:PORT[/DB]"),
        Case(arguments: ["relay", "--redis", "redis://127.0.0.1:6379/x"],
             cause: "--redis redis://127.0.0.1:6379/x: has the path /x, which is not a database number", hint: "rediss://"),
        Case(arguments: ["relay", "--redis-ca", text], cause: "--redis-ca \(text) goes with --redis", hint: "--redis rediss://HOST:PORT"),
        Case(arguments: ["relay", "--redis", "redis://127.0.0.1:6379", "--redis-ca", text],
             cause: "--redis-ca \(text) goes with a rediss:// URL", hint: "rediss://HOST:PORT"),
        Case(arguments: ["relay", "--redis", "rediss://127.0.0.1:6379", "--redis-ca", "/nonexistent/ca.pem"],
             cause: "--redis-ca /nonexistent/ca.pem: no such file", hint: "CA certificates"),
        Case(arguments: ["relay", "--redis", "rediss://127.0.0.1:6379", "--redis-ca", text],
             cause: "--redis-ca \(text): ", hint: "PEM file of the CA certificates"),
    ]

    @Test(arguments: cases)
    func aBadValueIsNamedWithItsCause(_ bad: Case) async throws {
        // Every relay case listens on a free port, should the check it tests be missing.
        let arguments = bad.arguments.first == "relay" && !bad.arguments.contains("--listen")
            ? bad.arguments + ["--listen", "127.0.0.1:0"] : bad.arguments
        let finished = try await BlipscopeExecutable.run(arguments, within: 60)
        #expect(finished.status != 0)
        let lines = finished.errors.split(separator: "\n").map(String.init)
        let error = try #require(lines.firstIndex { $0.hasPrefix("Error: ") }, "\(finished.errors)")
        #expect(lines[error].hasPrefix("Error: " + bad.cause), "\(lines[error])")
        #expect(lines.count > error + 1 && lines[error + 1].contains(bad.hint), "\(finished.errors)")
        #expect(!finished.errors.contains("Usage:"), "\(finished.errors)")
        #expect(!finished.errors.contains("listening on"), "nothing listens: \(finished.errors)")
    }
}
