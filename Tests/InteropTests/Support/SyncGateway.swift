import Foundation
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Couchbase's Sync Gateway (Community Edition, built from public source outside this
/// repository) run as the real upstream, standalone on an in-memory bucket, with its
/// configuration written by the test. Opt-in: `BLIPSCOPE_SYNC_GATEWAY` names a 3.2 binary,
/// `BLIPSCOPE_SYNC_GATEWAY4` a 4.1 one; without them these tests are skipped.
final class SyncGateway: @unchecked Sendable {
    static let path3 = ProcessInfo.processInfo.environment["BLIPSCOPE_SYNC_GATEWAY"]
    static let path4 = ProcessInfo.processInfo.environment["BLIPSCOPE_SYNC_GATEWAY4"]
    static func available(_ path: String?) -> Bool { path.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }
    static var anyAvailable: Bool { available(path3) || available(path4) }
    /// The binaries set, named by version line.
    static var binaries: [String] { [path3, path4].compactMap { $0 }.filter { available($0) } }

    let publicPort: Int
    let adminPort: Int
    let directory: URL
    let logPath: String
    private let process: Process

    /// The database `db` on SG's public port.
    var url: String { "ws://127.0.0.1:\(publicPort)/db" }

    /// Starts SG with `guest` (GUEST with every channel) and `users` (name → password, every
    /// channel), a `sync` function if given; returns once the admin API's `GET /db/` answers Online.
    /// `channels` limits a user (or `GUEST`) to the channels named (its `admin_channels`).
    /// `collections` (`scope.collection` names) makes the database's keyspaces those named
    /// collections: legacy configuration refuses `scopes`, so SG then runs with persistent
    /// configuration on an in-memory bootstrap bucket, the database and its users made through
    /// the admin API (`sync` becomes each collection's sync function).
    init(binary: String, guest: Bool = true, users: [String: String] = ["alice": "letmein"], sync: String? = nil,
         channels: [String: [String]] = [:], collections: [String]? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-sg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ports = try Self.freePorts(3)
        publicPort = ports[0]
        adminPort = ports[1]
        var userConfig: [String: Any] = ["GUEST": ["disabled": !guest, "admin_channels": channels["GUEST"] ?? ["*"]]]
        for (name, password) in users { userConfig[name] = ["password": password, "admin_channels": channels[name] ?? ["*"]] }
        var database: [String: Any] = ["server": "rosmar:/?mode=memory", "bucket": "db", "use_views": true,
                                       "num_index_replicas": 0, "users": userConfig,
                                       // 4.x requires it; 3.2 takes it too.
                                       "enable_shared_bucket_access": true]
        if let sync { database["sync"] = sync }
        let logging: [String: Any] = ["console": ["enabled": true, "log_level": "info", "log_keys": ["HTTP", "Sync", "SyncMsg", "WS", "CRUD"]]]
        var config: [String: Any] = [
            "disable_persistent_config": true, "admin_interface_authentication": false,
            "metrics_interface_authentication": false,
            "interface": "127.0.0.1:\(ports[0])", "adminInterface": "127.0.0.1:\(ports[1])",
            "metricsInterface": "127.0.0.1:\(ports[2])",
            "logging": logging, "databases": ["db": database]]
        if collections != nil {
            config = ["bootstrap": ["server": "rosmar:/?mode=memory", "use_tls_server": false],
                      "api": ["public_interface": "127.0.0.1:\(ports[0])", "admin_interface": "127.0.0.1:\(ports[1])",
                              "metrics_interface": "127.0.0.1:\(ports[2])", "admin_interface_authentication": false,
                              "metrics_interface_authentication": false],
                      "logging": logging]
        }
        let configPath = directory.appendingPathComponent("sg.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        logPath = directory.appendingPathComponent("sg.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [configPath]
        process.currentDirectoryURL = directory
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // SG is up in ~1.5 s; a loaded machine gets a minute.
        for _ in 0..<600 {
            if let collections, (try? await send("GET", "/", json: nil))?.status == 200 {
                try await createDatabase(collections: collections, guest: guest, users: users, channels: channels, sync: sync)
                return
            }
            if collections == nil, let body = try? await get("/db/", admin: true), body.contains("Online") { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        stop()
        throw SyncGatewayFailure("Sync Gateway did not come online: \((try? String(contentsOfFile: logPath, encoding: .utf8))?.suffix(2000) ?? "")")
    }

    /// Kills it at once (SIGKILL): no CLOSE, the TCP connections reset by the kernel.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sync Gateway's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    // MARK: REST

    func get(_ path: String, admin: Bool = true) async throws -> String {
        try await request("GET", path, admin: admin, body: nil)
    }

    /// Writes `documents` (JSON objects with `_id`) through the admin API's `_bulk_docs`.
    func put(_ documents: [[String: Any]]) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["docs": documents])
        _ = try await request("POST", "/db/_bulk_docs", admin: true, body: body)
    }

    /// The IDs of the live documents (`_all_docs`).
    func documentIDs() async throws -> [String] {
        let text = try await get("/db/_all_docs")
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return ((json?["rows"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
    }

    /// The live documents and their current revisions (`_all_docs`), by ID.
    func revisions() async throws -> [String: String] {
        let text = try await get("/db/_all_docs")
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        var revisions: [String: String] = [:]
        for row in (json?["rows"] as? [[String: Any]]) ?? [] {
            if let id = row["id"] as? String, let rev = (row["value"] as? [String: Any])?["rev"] as? String { revisions[id] = rev }
        }
        return revisions
    }

    /// Writes one document through the admin API (`PUT /db/ID`, with `?rev=` when it updates
    /// one), its `attachments` inline (base64 in `_attachments`); returns SG's answer.
    @discardableResult
    func put(_ id: String, _ body: [String: Any], rev: String? = nil,
             attachments: [String: (contentType: String, data: Data)] = [:]) async throws -> (status: Int, body: String) {
        var document = body
        if !attachments.isEmpty {
            document["_attachments"] = attachments.mapValues { ["content_type": $0.contentType, "data": $0.data.base64EncodedString()] }
        }
        let path = "/db/\(id)" + (rev.map { "?rev=\($0)" } ?? "")
        let (status, data) = try await send("PUT", path, admin: true, body: try JSONSerialization.data(withJSONObject: document))
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// The bytes of a document's attachment (`GET /db/ID/NAME`), nil when SG has none by that name.
    func attachment(_ id: String, _ name: String) async throws -> Data? {
        let escaped = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        let (status, data) = try await send("GET", "/db/\(id)/\(escaped)", admin: true, body: nil)
        return status == 200 ? data : nil
    }

    /// A document as SG stores it, its `_sync` metadata included (`GET /db/_raw/ID`).
    func raw(_ id: String) async throws -> [String: Any]? {
        let (status, data) = try await send("GET", "/db/_raw/\(id)", admin: true, body: nil)
        return status == 200 ? try JSONSerialization.jsonObject(with: data) as? [String: Any] : nil
    }

    /// Purges documents, every revision of them (`POST /db/_purge`): SG forgets them, and
    /// nothing of the purge is replicated.
    func purge(_ ids: [String]) async throws {
        let body = try JSONSerialization.data(withJSONObject: Dictionary(uniqueKeysWithValues: ids.map { ($0, ["*"]) }))
        let (status, data) = try await send("POST", "/db/_purge", admin: true, body: body)
        guard status == 200 else { throw SyncGatewayFailure("_purge: \(status) \(String(decoding: data, as: UTF8.self))") }
    }

    /// `database` with `collections` (persistent configuration), then its users, each with its
    /// channels in every collection; returns once it is Online.
    private func createDatabase(collections: [String], guest: Bool, users: [String: String], channels: [String: [String]],
                                sync: String?) async throws {
        var scopes: [String: [String: [String: Any]]] = [:]
        for path in collections {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            scopes[parts[0], default: [:]][parts[1]] = sync.map { ["sync": $0] } ?? [:]
        }
        let created = try await send("PUT", "/db/", json: ["bucket": "db", "enable_shared_bucket_access": true, "num_index_replicas": 0,
                                                          "scopes": scopes.mapValues { ["collections": $0] }])
        guard created.status / 100 == 2 else { throw SyncGatewayFailure("creating the database: \(created)") }
        for _ in 0..<600 {
            if let body = try? await get("/db/", admin: true), body.contains("Online") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        func access(_ name: String) -> [String: Any] {
            let granted = ["admin_channels": channels[name] ?? ["*"]]
            return ["admin_channels": granted["admin_channels"]!,
                    "collection_access": scopes.mapValues { $0.mapValues { _ in granted } }]
        }
        var principals: [(String, [String: Any])] = [("GUEST", access("GUEST").merging(["disabled": !guest]) { $1 })]
        for (name, password) in users { principals.append((name, access(name).merging(["password": password]) { $1 })) }
        for (name, body) in principals {
            let made = try await send("PUT", "/db/_user/\(name)", json: body)
            guard made.status / 100 == 2 else { throw SyncGatewayFailure("user \(name): \(made)") }
        }
    }

    /// Any REST call: `json` as the body (nil: none), on the admin port unless `admin` is false,
    /// with `headers`; the status and the body.
    func send(_ method: String, _ path: String, json: Any?, admin: Bool = true,
              headers: [String: String] = [:]) async throws -> (status: Int, body: String) {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) }
        let (status, data) = try await send(method, path, admin: admin, body: body, headers: headers)
        return (status, String(decoding: data, as: UTF8.self))
    }

    private func request(_ method: String, _ path: String, admin: Bool, body: Data?) async throws -> String {
        String(decoding: try await send(method, path, admin: admin, body: body).data, as: UTF8.self)
    }

    private func send(_ method: String, _ path: String, admin: Bool, body: Data?,
                      headers: [String: String] = [:]) async throws -> (status: Int, data: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(admin ? adminPort : publicPort)\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 60
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    private static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
            sockets.append(fd)
        }
        return ports
    }
}

struct SyncGatewayFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
