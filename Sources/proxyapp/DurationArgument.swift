import ArgumentParser
import Foundation

/// A positive length of time given on the command line: `7d`, `12h`, `30m`, `3600s`, or plain
/// seconds (`3600`). Used by `--pin-ttl`.
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible, Equatable, Sendable {
    /// The duration in whole seconds, always positive.
    var seconds: Int

    init(seconds: Int) {
        precondition(seconds > 0, "a duration must be positive")
        self.seconds = seconds
    }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard let value = Int(digits), value > 0 else { return nil }
        guard let unit = Self.units.first(where: { $0.suffix == text.dropFirst(digits.count) }) else { return nil }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: unit.seconds)
        guard !overflow else { return nil }
        self.seconds = seconds
    }

    var timeInterval: TimeInterval {
        TimeInterval(seconds)
    }

    /// The largest unit that divides it exactly: `7d`, `36h`, `90s`.
    var description: String {
        let unit = Self.units.first { !$0.suffix.isEmpty && seconds % $0.seconds == 0 } ?? ("s", 1)
        return "\(seconds / unit.seconds)\(unit.suffix)"
    }

    /// Suffixes and their length in seconds, largest first; a bare number means seconds.
    private static let units: [(suffix: Substring, seconds: Int)] = [
        ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1), ("", 1),
    ]
}
