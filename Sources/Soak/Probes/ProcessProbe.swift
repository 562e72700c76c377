import Foundation

/// Reads a process's resident memory and open descriptors from /proc (Linux).
public struct ProcessProbe: Sendable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// VmRSS in KiB, or nil when the process is gone.
    public func rssKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return Self.field("VmRSS", in: status)
    }

    /// Entries of /proc/PID/fd, or nil when the process is gone.
    public func openDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// A `Name:   1234 kB` field of a /proc status file, in KiB.
    public static func field(_ name: String, in status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
}
