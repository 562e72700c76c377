import Foundation

/// A process's CPU time, user and system, of all its threads (those that ended included), read
/// from the kernel's CPU clock for that process (`clock_getcpuclockid`): nanoseconds of the
/// scheduler's own accounting. `/proc/PID/stat` counts the same time in ticks of 10 ms, which on
/// a benchmark round of half a second is a step of 2 %.
enum ProcessCPUClock {
    /// Seconds so far: from the process's clock, else from its ticks, else 0 (the process is gone).
    static func cpuSeconds(of pid: pid_t) -> Double {
        seconds(of: pid) ?? tickSeconds(of: pid) ?? 0
    }

    /// Seconds so far, or nil when the process is gone or its clock cannot be read.
    static func seconds(of pid: pid_t) -> Double? {
        var clock = clockid_t()
        guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return nil }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The same from `/proc/PID/stat` (utime + stime, in ticks): nil when the process is gone.
    static func tickSeconds(of pid: pid_t) -> Double? {
        guard let fields = statFields(of: pid), fields.count > 12,
              let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields of `/proc/PID/stat` after the command name (state, ppid, …; utime is the 12th),
    /// or nil when the process is gone.
    static func statFields(of pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
