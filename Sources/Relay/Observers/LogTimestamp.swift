#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Replication

/// The log's timestamps: UTC wall-clock time with microseconds, e.g.
/// `2026-11-21T20:40:01.123456Z`, written as bytes. The date is computed arithmetically
/// (proleptic Gregorian calendar, as `gmtime_r`), so no C time function and no lock of the C
/// library runs per line; ``LineScratch`` also keeps each thread's last second formatted.
///
/// Limits: a year is written as its last four digits; years before 1 are not supported.
enum LogTimestamp {
    /// The bytes of a timestamp.
    static let length = 27
    /// The bytes up to the microseconds: `2026-11-21T20:40:01.`.
    static let secondLength = 20

    /// The timestamp of now (`CLOCK_REALTIME`).
    static func now() -> String {
        String(unsafeUninitializedCapacity: length) { buffer in
            LineScratch.current.writeTimestamp(to: buffer.baseAddress!)
            return length
        }
    }

    /// Writes the ``length`` bytes of the time `seconds` after the epoch plus `microseconds`
    /// (0..<1_000_000).
    static func write(seconds: Int, microseconds: Int, to out: UnsafeMutablePointer<UInt8>) {
        writeSecond(seconds, to: out)
        writeMicroseconds(microseconds, to: out + secondLength)
    }

    /// Writes the ``secondLength`` bytes of the date and time `seconds` after the epoch.
    static func writeSecond(_ seconds: Int, to out: UnsafeMutablePointer<UInt8>) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let date = civilDate(daysSinceEpoch: days)
        let year = date.year % 10_000
        DecimalDigits.writeTwo(year / 100, to: out); DecimalDigits.writeTwo(year % 100, to: out + 2); out[4] = 0x2D
        DecimalDigits.writeTwo(date.month, to: out + 5); out[7] = 0x2D
        DecimalDigits.writeTwo(date.day, to: out + 8); out[10] = 0x54
        DecimalDigits.writeTwo(secondOfDay / 3600, to: out + 11); out[13] = 0x3A
        DecimalDigits.writeTwo(secondOfDay / 60 % 60, to: out + 14); out[16] = 0x3A
        DecimalDigits.writeTwo(secondOfDay % 60, to: out + 17); out[19] = 0x2E
    }

    /// Writes the last `length - secondLength` bytes: six digits of `microseconds` and `Z`.
    static func writeMicroseconds(_ microseconds: Int, to out: UnsafeMutablePointer<UInt8>) {
        let value = min(max(microseconds, 0), 999_999)
        DecimalDigits.writeTwo(value / 10_000, to: out)
        DecimalDigits.writeTwo(value / 100 % 100, to: out + 2)
        DecimalDigits.writeTwo(value % 100, to: out + 4)
        out[6] = 0x5A
    }

    /// Year, month (1–12) and day (1–31) of a day counted from 1970-01-01 (negative before it),
    /// by Howard Hinnant's `civil_from_days`.
    static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
