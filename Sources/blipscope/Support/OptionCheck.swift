import BLIPNIO
import Foundation
import Relay

/// The values of options that name a file, an address or a number, checked before anything
/// starts. A bad one fails with a ``CommandFailure``: the option, the value and the cause in
/// words, then what to give instead — no usage lines, which are for a mistyped command line.
enum OptionCheck {
    /// What a command that reads captures takes.
    static let captureHint = "give .blipcap capture files (relay --capture), pcap or pcapng files, or directories of them"
    /// What `--load` takes.
    static let seedHint = "JSON file of documents (`blipscope gateway --load` format, e.g. samples/demo-docs.json)"

    /// `path` names a file that can be read, or the failure says why not.
    static func readableFile(_ path: String, option: String, holding what: String) throws -> String {
        if let reason = BLIPTLSError.unreadableReason(path) {
            throw CommandFailure(cause: "\(option) \(path): \(reason)", hint: "give the \(what)")
        }
        return path
    }

    /// `path` names a file that can be created or appended to: its directory exists and is
    /// writable, and it is no directory itself.
    static func writableFile(_ path: String, option: String, holding what: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue {
                throw CommandFailure(cause: "\(option) \(path): is a directory", hint: "give the path of the \(what) to write")
            }
            guard FileManager.default.isWritableFile(atPath: path) else {
                throw CommandFailure(cause: "\(option) \(path): permission denied", hint: "give a \(what) this user may write")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure(cause: "\(option) \(path): the directory \(directory) does not exist",
                                 hint: "create it, or give a \(what) in a directory that exists")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw CommandFailure(cause: "\(option) \(path): cannot create files in \(directory) (permission denied)",
                                 hint: "give a \(what) in a directory this user may write")
        }
    }

    /// `path` names a directory, or one that can be made (its nearest existing ancestor is a
    /// writable directory).
    static func directory(_ path: String, option: String, holding what: String) throws {
        var isDirectory: ObjCBool = false
        var existing = path
        while !FileManager.default.fileExists(atPath: existing, isDirectory: &isDirectory) {
            let parent = (existing as NSString).deletingLastPathComponent
            existing = parent.isEmpty ? "." : parent
        }
        guard isDirectory.boolValue else {
            throw CommandFailure(cause: "\(option) \(path): \(existing) is a file, not a directory", hint: "give a directory for the \(what)")
        }
        let ready = existing == path ? FileManager.default.isWritableFile(atPath: path)
            : FileManager.default.isWritableFile(atPath: existing)
        guard ready else {
            throw CommandFailure(cause: "\(option) \(path): \(existing) is not writable (permission denied)",
                                 hint: "give a directory for the \(what) that this user may write")
        }
    }

    /// `HOST:PORT` (IPv6 in brackets; an empty host is 127.0.0.1; port 0 lets the system pick).
    static func hostPort(_ text: String, option: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw CommandFailure(cause: "\(option) \(text): no port", hint: "give HOST:PORT, e.g. 127.0.0.1:4994")
        }
        let portText = text[text.index(after: colon)...]
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw CommandFailure(cause: "\(option) \(text): \(portText.isEmpty ? "no port" : "\(portText) is not a port (0 to 65535)")",
                                 hint: "give HOST:PORT, e.g. 127.0.0.1:4994")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// A gateway's URL, `ws://HOST:PORT` or `wss://HOST:PORT`.
    /// `shown` is how the failure names the value (default: the option, then the text).
    static func upstreamURL(_ text: String, option: String, shown: String? = nil,
                            expected: String = "ws://HOST:PORT or wss://HOST:PORT (Sync Gateway's public port)") throws -> UpstreamURL {
        guard let url = UpstreamURL(text) else {
            let scheme = text.range(of: "://").map { String(text[..<$0.lowerBound]) }
            let cause = scheme.map { $0 == "http" || $0 == "https" ? "\($0):// is not a WebSocket URL" : "\($0):// is not ws:// or wss://" }
                ?? "not a URL"
            throw CommandFailure(cause: "\(shown ?? "\(option) \(text)"): \(cause)", hint: "give \(expected)")
        }
        return url
    }

    /// A number of at least `minimum`.
    static func atLeast<Number: Comparable>(_ value: Number, _ minimum: Number, option: String, unit: String = "") throws -> Number {
        guard value >= minimum else {
            throw CommandFailure(cause: "\(option) \(value): must be at least \(minimum)\(unit)", hint: "give \(minimum)\(unit) or more")
        }
        return value
    }

    /// The wss:// a server listens with, `--tls-cert` and `--tls-key` loaded now, so that a bad
    /// file fails the command rather than its first client. `options`: the two options' names
    /// (the admin listener's are `--admin-tls-cert` and `--admin-tls-key`).
    static func serverTLS(certificate: String?, key: String?,
                          options: (certificate: String, key: String) = ("--tls-cert", "--tls-key")) throws -> BLIPServerTLS? {
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            let tls = BLIPServerTLS(certificateChainPath: certificate, privateKeyPath: key)
            do { _ = try tls.makeContext() } catch { throw failure(error, caBundleOption: "--upstream-ca", serverOptions: options) }
            return tls
        default:
            throw CommandFailure(cause: "\(options.certificate) and \(options.key) go together", hint: "give both PEM files, or neither")
        }
    }

    /// The TLS a client dials wss:// with: `caBundle` (the option `option`) loaded now.
    static func clientTLS(caBundle: String?, insecure: Bool, option: String) throws -> BLIPClientTLS {
        let tls = BLIPClientTLS(caBundlePath: caBundle, insecure: insecure)
        if caBundle != nil, !insecure {
            do { _ = try tls.makeContext() } catch { throw failure(error, caBundleOption: option) }
        }
        return tls
    }

    private static func failure(_ error: BLIPTLSError, caBundleOption: String,
                                serverOptions: (certificate: String, key: String) = ("--tls-cert", "--tls-key")) -> CommandFailure {
        switch error.file {
        case .certificateChain:
            return CommandFailure(cause: "\(serverOptions.certificate) \(error)", hint: "give the PEM file of the server's certificate, then any intermediates")
        case .privateKey:
            return CommandFailure(cause: "\(serverOptions.key) \(error)",
                                  hint: "give the PEM file of the private key of \(serverOptions.certificate)'s first certificate")
        case .caBundle:
            return CommandFailure(cause: "\(caBundleOption) \(error)", hint: "give a PEM file of the CA certificates to trust")
        }
    }
}
