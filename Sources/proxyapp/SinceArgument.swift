import ArgumentParser
import Foundation

/// The `--since` of `proxyapp export`: a moment given either as how long ago (`30m`, `2h`,
/// `7d`, as `--pin-ttl` takes them) or as a date and time (`2026-11-22T10:00:00Z`,
/// `2026-11-22T10:00:00.250+01:00`, `2026-11-22T10:00` or `2026-11-22`, the last two in local
/// time). It resolves to an absolute date once, when parsed. Durations over 100 years are refused.
struct SinceArgument: ExpressibleByArgument, Sendable {
    var date: Date

    init(date: Date) {
        self.date = date
    }

    init?(argument: String) {
        self.init(argument: argument, now: Date(), timeZone: .current)
    }

    /// Testable form: `now` anchors relative durations, `timeZone` reads zone-less times.
    init?(argument: String, now: Date, timeZone: TimeZone) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if let ago = DurationArgument(argument: text) {
            guard ago.seconds <= Self.longestAgo else { return nil }
            date = now.addingTimeInterval(-ago.timeInterval)
            return
        }
        guard let date = Self.absoluteDate(text, timeZone: timeZone) else { return nil }
        self.date = date
    }

    /// 100 years in seconds: a longer "ago" is a typo, and far enough back it leaves the range
    /// of the store's epoch milliseconds.
    static let longestAgo = 100 * 366 * 86_400

    static let formatHelp = "how long ago (30m, 2h, 7d) or a date and time (2026-11-22T10:00:00Z, 2026-11-22)"

    private static func absoluteDate(_ text: String, timeZone: TimeZone) -> Date? {
        let zoned = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
        ] {
            zoned.formatOptions = options
            if let date = zoned.date(from: text) { return date }
        }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = timeZone
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let date = local.date(from: text) { return date }
        }
        return nil
    }
}
