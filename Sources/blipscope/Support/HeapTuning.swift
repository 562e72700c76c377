#if canImport(Glibc)
import CMalloc
import Glibc
#endif

/// glibc malloc settings for a relay that runs for days with many sessions at once
/// (`relay --compact-heap`): a flat RSS, paid for in CPU on large messages.
///
/// glibc raises its mmap threshold each time a large mapped block is freed (up to 32 MiB), so
/// after a few large messages every later buffer up to that size comes from the heap, and the
/// heap, cut up by 200 sessions' buffers of every size, stays at its high-water mark. In the soak
/// (`bench soak`: 200 churning sessions, messages of 64 B–256 KiB) the relay's RSS climbed from
/// 112 to 166 MiB over 2 million messages that way; with the threshold fixed at 128 KiB it stayed
/// within 1 % of its size after warm-up, and the run was faster. Fixing the threshold by hand
/// also turns glibc's adjustment off, which is the point. The price: every buffer over 128 KiB is
/// mapped, faulted in and unmapped, which doubled the relay's CPU per round trip on 1 MiB
/// messages (`bench relay` C), so it is not the default.
///
/// A user's own `MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_` (glibc's environment
/// settings) win over these. Other C libraries: nothing is changed.
enum HeapTuning {
    /// Blocks at least this large are mapped on their own and unmapped when freed.
    static let mmapThreshold: Int32 = 128 * 1024
    /// Free memory above this at the top of the heap is given back to the system.
    static let trimThreshold: Int32 = 1024 * 1024

    /// One line for a server's start: what was set (`applied`, from ``apply()``), or that the
    /// environment set it; glibc's own behaviour when the relay was not asked.
    static func summary(applied: [String]?) -> String {
        guard let applied else { return "heap: the C library's defaults (--compact-heap fixes them)" }
        #if canImport(Glibc)
        let mmap = applied.contains("mmapThreshold") ? "\(mmapThreshold / 1024) KiB" : "MALLOC_MMAP_THRESHOLD_"
        let trim = applied.contains("trimThreshold") ? "\(trimThreshold / 1024 / 1024) MiB" : "MALLOC_TRIM_THRESHOLD_"
        return "heap: malloc mmap threshold \(mmap), trim threshold \(trim)"
        #else
        return "heap: the C library's defaults"
        #endif
    }

    /// Applies both settings unless the environment already sets them; returns what it set.
    static func apply() -> [String] {
        var applied: [String] = []
        #if canImport(Glibc)
        if getenv("MALLOC_MMAP_THRESHOLD_") == nil, mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1 {
            applied.append("mmapThreshold")
        }
        if getenv("MALLOC_TRIM_THRESHOLD_") == nil, mallopt(M_TRIM_THRESHOLD, trimThreshold) == 1 {
            applied.append("trimThreshold")
        }
        #endif
        return applied
    }
}
