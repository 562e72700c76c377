import Foundation
import NIOCore
import NIOPosix

/// Debian's nginx run as a blind WebSocket reverse proxy on loopback (one worker, no logging,
/// no buffering), for `bench relay --nginx`: the same workloads through a proxy that only copies
/// bytes, as a yardstick for the relay's cost of decoding everything.
final class NginxProcess {
    let process = Process()
    let port: Int
    private let directory: URL

    /// Starts nginx in front of `upstreamPort`, its worker bound to `cpus` when given
    /// (`worker_cpu_affinity`). Throws when nginx is not installed or does not start.
    init(upstreamPort: Int, cpus: [Int]? = nil) throws {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("nginx is not installed (Debian: apt-get install nginx-light)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-nginx-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        let dir = directory.path
        let configuration = """
            worker_processes 1;
            \(cpus.map { "worker_cpu_affinity " + Self.mask($0) + ";" } ?? "")
            daemon off;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 4096; }
            http {
                access_log off;
                client_body_temp_path \(dir)/body; proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi; uwsgi_temp_path \(dir)/uwsgi; scgi_temp_path \(dir)/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://127.0.0.1:\(upstreamPort);
                        proxy_http_version 1.1;
                        proxy_set_header Upgrade $http_upgrade;
                        proxy_set_header Connection "upgrade";
                        proxy_buffering off;
                        proxy_read_timeout 3600s;
                    }
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", file.path, "-p", dir]
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready when it accepts connections (bounded).
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw BenchError("nginx did not start; see \(dir)/error.log")
            }
            usleep(20_000)
        }
    }

    /// nginx's CPU mask: one character per CPU, the highest first (`10` is CPU 1).
    static func mask(_ cpus: [Int]) -> String {
        String((0...(cpus.max() ?? 0)).reversed().map { cpus.contains($0) ? "1" : "0" })
    }

    /// User + system CPU seconds of the master and its workers so far (``ProcessCPUClock``).
    var cpuSeconds: Double {
        let master = process.processIdentifier
        var pids = [master]
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") {
            for entry in entries {
                guard let pid = Int32(entry), let stat = ProcessCPUClock.statFields(of: pid), stat.count > 1, Int32(stat[1]) == master else { continue }
                pids.append(pid)
            }
        }
        return pids.reduce(0.0) { $0 + ProcessCPUClock.cpuSeconds(of: $1) }
    }

    func stop() {
        process.stopAndWait(SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func freePort() throws -> Int {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let channel = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        let port = channel.localAddress?.port ?? 0
        try channel.close().wait()
        return port
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
