import BLIPTestSupport
import Foundation
import Testing
@testable import Relay

/// The log's timestamps are formatted without the C library's time functions, and each thread
/// keeps its last second formatted: each must read exactly as `gmtime_r` would have it.
@Suite struct LogLineTimestampTests {
    /// The text `gmtime_r` gives for the same instant.
    static func reference(seconds: Int, microseconds: Int) -> String {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), microseconds)
    }

    static func formatted(seconds: Int, microseconds: Int) -> String {
        String(unsafeUninitializedCapacity: LogTimestamp.length) { buffer in
            LogTimestamp.write(seconds: seconds, microseconds: microseconds, to: buffer.baseAddress!)
            return LogTimestamp.length
        }
    }

    @Test func calendarEdgesReadAsGmtime() {
        let instants = [
            0, -1, 59, 60, 86_399, 86_400,  // the epoch and its neighbours
            951_782_399, 951_782_400, 951_868_800,  // 2000-02-28 23:59:59, 2000-02-29, 2000-03-01 (400-year leap)
            4_107_542_399, 4_107_542_400,  // 2100-02-28 23:59:59, 2100-03-01 (no leap day)
            1_767_225_599, 1_767_225_600,  // the end of 2025 and the start of 2026
            253_402_300_799,  // 9999-12-31 23:59:59
            -2_208_988_800, -62_135_596_800,  // 1900-01-01, 0001-01-01
        ]
        for seconds in instants {
            for microseconds in [0, 7, 999_999] {
                #expect(Self.formatted(seconds: seconds, microseconds: microseconds)
                        == Self.reference(seconds: seconds, microseconds: microseconds), "\(seconds)")
            }
        }
    }

    @Test func randomInstantsReadAsGmtime() {
        var random = SeededRandom(seed: 27)
        for _ in 0..<20_000 {
            let seconds = Int(random.next() % 253_402_300_800)  // 1970 to the end of 9999
            let microseconds = Int(random.next() % 1_000_000)
            #expect(Self.formatted(seconds: seconds, microseconds: microseconds)
                    == Self.reference(seconds: seconds, microseconds: microseconds))
        }
    }

    /// A scratch's cached second is used only while the second is unchanged: across second,
    /// day and year boundaries and a clock stepped back, its text is a fresh format's.
    @Test func cachedSecondReadsAsAFreshFormat() {
        let scratch = LineScratch()
        let newYear = 1_767_225_600  // 2026-01-01T00:00:00
        let times = [(newYear - 2, 999_999), (newYear - 1, 0), (newYear - 1, 500_000), (newYear - 1, 999_999),
                     (newYear, 0), (newYear, 1), (newYear, 999_999), (newYear + 1, 0), (newYear - 1, 10),
                     (newYear - 1, 11), (newYear + 86_400, 5), (newYear + 86_400, 6), (0, 0), (0, 42)]
        for (seconds, microseconds) in times {
            let cached = String(unsafeUninitializedCapacity: LogTimestamp.length) { buffer in
                scratch.writeTimestamp(seconds: seconds, microseconds: microseconds, to: buffer.baseAddress!)
                return LogTimestamp.length
            }
            #expect(cached == Self.reference(seconds: seconds, microseconds: microseconds), "\(seconds).\(microseconds)")
        }
    }

    @Test func nowHasTheLogShape() {
        let text = LogTimestamp.now()
        #expect(text.utf8.count == 27)
        #expect(text.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/) != nil, "\(text)")
    }
}
