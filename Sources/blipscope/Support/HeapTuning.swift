#if canImport(Glibc)
import CMalloc
import Glibc
#endif

/// glibc malloc settings for the relay (`relay --heap`): ``Profile/steady`` by default,
/// ``Profile/compact`` for a relay that runs for days with many sessions of small documents.
///
/// glibc's own behaviour (``Profile/libc``) adjusts two thresholds as it goes. Each time a large
/// mapped block is freed it raises the mmap threshold (up to 32 MiB), so later buffers up to
/// that size come from the heap; and it gives free memory at the top of the heap back to the
/// system once there is more than twice that threshold. A relay assembling several large
/// messages at once in a direction (go-blip interleaves the frames of its four 1 MiB requests in
/// `bench relay --goblip` C) frees them together, the heap's top is trimmed, and the next
/// messages fault the same pages in again: 200,000–300,000 page faults over 600 round trips,
/// a quarter of the relay's CPU. ``Profile/steady`` keeps 16 MiB of free heap before trimming
/// (7,500 faults; relay CPU −25 %, peak RSS +4–10 MiB there: the memory the next messages use)
/// and maps blocks over 4 MiB on their own, so the heap no longer grows to glibc's 32 MiB
/// threshold.
///
/// ``Profile/compact`` maps every block over 128 KiB on its own: the heap, cut up by 200
/// sessions' buffers of every size, then no longer stays at its high-water mark. In the soak
/// (`bench soak`: 200 churning sessions, messages of 64 B–256 KiB) the relay's RSS climbed from
/// 112 to 166 MiB over 2 million messages with glibc's defaults and stayed within 1 % of its
/// size after warm-up with these; the price is that every buffer over 128 KiB is mapped, faulted
/// in and unmapped, which doubled the relay's CPU per round trip on 1 MiB messages.
///
/// Setting either threshold turns glibc's adjustment off. A user's own `MALLOC_MMAP_THRESHOLD_` /
/// `MALLOC_TRIM_THRESHOLD_` (glibc's environment settings) win over these. Other C libraries:
/// nothing is changed.
enum HeapTuning {
    enum Profile: String, CaseIterable, Sendable {
        /// Blocks over 4 MiB mapped on their own; 16 MiB of free heap kept before trimming.
        case steady
        /// Blocks over 128 KiB mapped on their own; 1 MiB of free heap kept before trimming.
        case compact
        /// glibc's own adjusting thresholds.
        case libc

        /// Blocks at least this large are mapped on their own and unmapped when freed.
        var mmapThreshold: Int32? {
            switch self {
            case .steady: return 4 * 1024 * 1024
            case .compact: return 128 * 1024
            case .libc: return nil
            }
        }

        /// Free memory above this at the top of the heap is given back to the system.
        var trimThreshold: Int32? {
            switch self {
            case .steady: return 16 * 1024 * 1024
            case .compact: return 1024 * 1024
            case .libc: return nil
            }
        }
    }

    /// One line for a server's start: what `profile` set (`applied`, from ``apply(_:)``), or that
    /// the environment set it.
    static func summary(_ profile: Profile, applied: [String]) -> String {
        guard profile != .libc else { return "heap: the C library's defaults (--heap libc)" }
        #if canImport(Glibc)
        func size(_ bytes: Int32) -> String {
            bytes >= 1024 * 1024 ? "\(bytes / 1024 / 1024) MiB" : "\(bytes / 1024) KiB"
        }
        let mmap = applied.contains("mmapThreshold") ? size(profile.mmapThreshold!) : "MALLOC_MMAP_THRESHOLD_"
        let trim = applied.contains("trimThreshold") ? size(profile.trimThreshold!) : "MALLOC_TRIM_THRESHOLD_"
        return "heap: malloc mmap threshold \(mmap), trim threshold \(trim) (--heap \(profile.rawValue))"
        #else
        return "heap: the C library's defaults"
        #endif
    }

    /// Applies `profile`'s settings that the environment does not set; returns what it set.
    static func apply(_ profile: Profile) -> [String] {
        var applied: [String] = []
        #if canImport(Glibc)
        if let threshold = profile.mmapThreshold, getenv("MALLOC_MMAP_THRESHOLD_") == nil,
           mallopt(M_MMAP_THRESHOLD, threshold) == 1 {
            applied.append("mmapThreshold")
        }
        if let threshold = profile.trimThreshold, getenv("MALLOC_TRIM_THRESHOLD_") == nil,
           mallopt(M_TRIM_THRESHOLD, threshold) == 1 {
            applied.append("trimThreshold")
        }
        #endif
        return applied
    }
}
