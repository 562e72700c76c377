#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Capture

extension CaptureTimestamp {
    /// The wall-clock time now (`CLOCK_REALTIME`), for records the relay writes as traffic passes.
    static func now() -> CaptureTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return CaptureTimestamp(seconds: Int64(spec.tv_sec), nanoseconds: UInt32(spec.tv_nsec))
    }
}
