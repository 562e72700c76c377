import Foundation
import NIOCore
import NIOPosix

/// The CPUs the relay's event loops are pinned to: one loop per listed CPU, each loop's thread
/// bound to its CPU (nginx's `worker_cpu_affinity`, HAProxy's `cpu-map`). Pinning keeps a
/// session's work on one core and keeps the relay off cores reserved for something else (the
/// peers of a benchmark, a co-located gateway); without it the kernel places threads freely.
///
/// Lists are written as `taskset -c` reads them: `1`, `0,2`, `0-3,6`.
public struct CPUAffinity: Sendable, Equatable {
    /// The CPU ids, in the order their event loops are made, without repeats.
    public let cpus: [Int]

    /// The largest list accepted (the kernel's default `CPU_SETSIZE`).
    public static let maxCPUs = 1024

    /// Parses a CPU list and checks every id against the CPUs this process may run on.
    public init(parsing text: String, allowed: Set<Int> = CPUAffinity.allowedCPUs()) throws(RelayError) {
        var cpus: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int(bounds[0]), let high = Int(bounds[bounds.count - 1]),
                  low >= 0, low <= high, high < Self.maxCPUs else {
                throw RelayError(.configuration("CPU list \"\(text)\": \"\(part)\" is not a CPU id or a range like 0-3"))
            }
            for cpu in low...high where !cpus.contains(cpu) { cpus.append(cpu) }
        }
        let outside = cpus.filter { !allowed.contains($0) }
        guard outside.isEmpty else {
            throw RelayError(.configuration("CPU list \"\(text)\": this process may run on CPUs "
                + Self.describe(allowed.sorted()) + ", not " + outside.map(String.init).joined(separator: ",")))
        }
        self.cpus = cpus
    }

    /// One event loop per CPU, pinned to it.
    public func makeEventLoopGroup() -> MultiThreadedEventLoopGroup {
        MultiThreadedEventLoopGroup(pinnedCPUIDs: cpus)
    }

    /// The CPUs this process may run on (`Cpus_allowed_list` of /proc/self/status); every CPU
    /// below the core count where that file cannot be read.
    public static func allowedCPUs() -> Set<Int> {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }),
           let list = line.split(separator: ":").last.map({ $0.trimmingCharacters(in: .whitespaces) }),
           let parsed = try? CPUAffinity(parsing: list, allowed: Set(0..<maxCPUs)) {
            return Set(parsed.cpus)
        }
        return Set(0..<System.coreCount)
    }

    /// `0-3,6` for [0, 1, 2, 3, 6].
    static func describe(_ sorted: [Int]) -> String {
        var ranges: [String] = []
        var index = 0
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            ranges.append(end == index ? "\(sorted[index])" : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return ranges.joined(separator: ",")
    }
}
