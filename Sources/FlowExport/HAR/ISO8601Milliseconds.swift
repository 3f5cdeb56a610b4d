import Foundation

/// Formats dates as HAR wants them, `2026-11-22T10:01:02.345Z`: ISO 8601 in UTC with
/// milliseconds, computed by hand.
///
/// `ISO8601DateFormatter` costs microseconds per call and allocates; an export of a million
/// flows formats a million dates.
enum ISO8601Milliseconds {
    /// Appends the date as 24 ASCII bytes (no quotes). Dates before 1970 or after 9999 are
    /// clamped to that range so the text always has the same shape.
    static func append(_ date: Date, to text: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        let clamped = seconds.isFinite ? min(max(seconds, 0), 253_402_300_799.999) : 0
        let totalMilliseconds = min(Int64((clamped * 1000).rounded()), 253_402_300_799_999)
        let milliseconds = Int(totalMilliseconds % 1000)
        let totalSeconds = totalMilliseconds / 1000
        let days = Int(totalSeconds / 86_400)
        let secondOfDay = Int(totalSeconds % 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        appendDigits(year, count: 4, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &text)
        text.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, count: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &text)
        text.append(UInt8(ascii: "."))
        appendDigits(milliseconds, count: 3, to: &text)
        text.append(UInt8(ascii: "Z"))
    }

    static func string(_ date: Date) -> String {
        var text: [UInt8] = []
        append(date, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian year, month, day.
    private static func civilDate(daysSinceEpoch: Int) -> (Int, Int, Int) {
        let shifted = daysSinceEpoch + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func appendDigits(_ value: Int, count: Int, to text: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
