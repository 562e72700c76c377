#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``LineBuilder`` keeps from one line to the next on a thread: the last line's buffer,
/// lent to the next line, and the last timestamp's date and second, already formatted. Lines
/// are built on several event-loop threads at once and each thread has its own scratch, so
/// nothing here is shared or locked.
///
/// Limits: a buffer that grew past ``keptCapacity`` is freed, not kept; a builder made while
/// another is open on the same thread gets a buffer of its own.
final class LineScratch {
    /// The most a thread keeps between lines.
    static let keptCapacity = 64 * 1024

    // Only ever touched by the scratch's own thread, and never while another access is open.
    @exclusivity(unchecked) private var buffer: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) private var bufferCapacity = 0
    /// The second whose text ``prefix`` holds (`Int.min`: none yet).
    @exclusivity(unchecked) private var second = Int.min
    /// `2026-11-21T20:40:01.`: the timestamp up to its microseconds.
    private let prefix = UnsafeMutablePointer<UInt8>.allocate(capacity: LogTimestamp.secondLength)

    init() {}

    deinit {
        buffer?.deallocate()
        prefix.deallocate()
    }

    /// The calling thread's scratch, made on first use and freed when the thread ends. Valid
    /// only for synchronous use on that thread (not across a suspension point).
    static var current: LineScratch { currentUnretained.takeUnretainedValue() }

    /// ``current`` without a retain: the thread's slot holds it until the thread ends.
    static var currentUnretained: Unmanaged<LineScratch> {
        if let raw = pthread_getspecific(key) { return Unmanaged<LineScratch>.fromOpaque(raw) }
        let scratch = Unmanaged.passRetained(LineScratch())
        pthread_setspecific(key, scratch.toOpaque())
        return scratch
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { raw in
            Unmanaged<LineScratch>.fromOpaque((raw as UnsafeMutableRawPointer?)!).release()
        }
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()

    // MARK: buffer

    /// The kept buffer, if there is one; the caller owns it until it gives it back.
    func takeBuffer() -> (base: UnsafeMutablePointer<UInt8>, capacity: Int)? {
        guard let base = buffer else { return nil }
        buffer = nil
        return (base, bufferCapacity)
    }

    /// Keeps `base` for the next line, or frees it (too large, or another buffer is kept already).
    func giveBack(_ base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        guard buffer == nil, capacity <= Self.keptCapacity else {
            base.deallocate()
            return
        }
        buffer = base
        bufferCapacity = capacity
    }

    // MARK: timestamp

    /// Writes the timestamp of now (`CLOCK_REALTIME`), ``LogTimestamp/length`` bytes.
    func writeTimestamp(to out: UnsafeMutablePointer<UInt8>) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        writeTimestamp(seconds: Int(now.tv_sec), microseconds: Int(now.tv_nsec / 1000), to: out)
    }

    /// As ``LogTimestamp/write(seconds:microseconds:to:)``, formatting the date and time only
    /// when the second differs from the last one written here.
    func writeTimestamp(seconds: Int, microseconds: Int, to out: UnsafeMutablePointer<UInt8>) {
        if seconds != second {
            LogTimestamp.writeSecond(seconds, to: prefix)
            second = seconds
        }
        out.update(from: prefix, count: LogTimestamp.secondLength)
        LogTimestamp.writeMicroseconds(microseconds, to: out + LogTimestamp.secondLength)
    }
}
