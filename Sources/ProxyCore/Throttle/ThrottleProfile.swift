/// A slow network to imitate: how fast bytes may go each way and how long each request and
/// each new connection waits first.
///
/// It exists so a rule (`throttle:`), `--throttle` and the engine share one value: the engine
/// paces with it (`TokenBucket`), the pool keeps connections of different profiles apart, and
/// flows name it. Rates are bytes per second; nil means that direction is not limited.
public struct ThrottleProfile: Sendable, Hashable, CustomStringConvertible {
    /// Toward the client (downloads), bytes per second.
    public var downBytesPerSecond: Int?
    /// Toward the origin (uploads), bytes per second.
    public var upBytesPerSecond: Int?
    /// Added once before each request is sent and once more when it needs a new connection.
    public var latencyMilliseconds: Int
    /// The preset it came from (`3g`), for messages; nil for figures given one by one.
    public var preset: String?

    public init(downBytesPerSecond: Int? = nil, upBytesPerSecond: Int? = nil, latencyMilliseconds: Int = 0,
                preset: String? = nil) {
        self.downBytesPerSecond = downBytesPerSecond
        self.upBytesPerSecond = upBytesPerSecond
        self.latencyMilliseconds = latencyMilliseconds
        self.preset = preset
    }

    /// Nothing limited, no latency: the same as no throttle.
    public var isNone: Bool { downBytesPerSecond == nil && upBytesPerSecond == nil && latencyMilliseconds == 0 }

    /// Presets named as Charles and the network link conditioners name them. Their figures are
    /// typical of each network, not measured standards: down, up, latency.
    public static let presets: [(name: String, profile: ThrottleProfile)] = [
        ("edge", ThrottleProfile(downBytesPerSecond: 240_000 / 8, upBytesPerSecond: 200_000 / 8, latencyMilliseconds: 400, preset: "edge")),
        ("3g", ThrottleProfile(downBytesPerSecond: 780_000 / 8, upBytesPerSecond: 330_000 / 8, latencyMilliseconds: 100, preset: "3g")),
        ("lte", ThrottleProfile(downBytesPerSecond: 12_000_000 / 8, upBytesPerSecond: 5_000_000 / 8, latencyMilliseconds: 50, preset: "lte")),
        ("dsl", ThrottleProfile(downBytesPerSecond: 2_000_000 / 8, upBytesPerSecond: 256_000 / 8, latencyMilliseconds: 30, preset: "dsl")),
        ("wifi-lossy", ThrottleProfile(downBytesPerSecond: 2_000_000 / 8, upBytesPerSecond: 1_000_000 / 8, latencyMilliseconds: 200,
                                       preset: "wifi-lossy")),
    ]

    public static func preset(named name: String) -> ThrottleProfile? {
        presets.first { $0.name == name.lowercased() }?.profile
    }

    /// `3g (780kbit down, 330kbit up, 100ms)`, `down 1mbit, up unlimited, 0ms`.
    public var description: String {
        let figures = "\(ThrottleRate.text(downBytesPerSecond)) down, \(ThrottleRate.text(upBytesPerSecond)) up, \(latencyMilliseconds)ms"
        return preset.map { "\($0) (\(figures))" } ?? figures
    }
}

/// Rates as people write them, per second: `256kbit`, `1.5mbit`, `100KB`, `2MiB`. Units ending in
/// `bit` (or `bps`) count bits, units ending in an upper-case `B` bytes; k, m and g are 1000s,
/// `KiB`/`MiB`/`GiB` 1024s. A lower-case `kb` could be either and is refused.
public enum ThrottleRate {
    /// Bytes per second for `text`, or why it is not a rate.
    public static func parse(_ text: String) throws(ThrottleRateError) -> Int {
        var rest = Substring(text)
        while rest.first == " " { rest.removeFirst() }
        while rest.last == " " { rest.removeLast() }
        let numberEnd = rest.firstIndex { !("0"..."9").contains($0) && $0 != "." } ?? rest.endIndex
        let number = rest[..<numberEnd]
        var unit = String(rest[numberEnd...])
        if unit.hasSuffix("/s") { unit.removeLast(2) }
        guard !number.isEmpty, number.count <= 20, number.filter({ $0 == "." }).count <= 1,
              let value = Double(number), value > 0, let perUnit = bytesPerUnit(unit) else {
            throw ThrottleRateError(text: text)
        }
        let bytes = value * perUnit
        guard bytes >= 1 else { throw ThrottleRateError(text: text, reason: "is below the slowest rate, 8bit (one byte a second)") }
        guard bytes <= 100_000_000_000 else { throw ThrottleRateError(text: text, reason: "is above the fastest rate, 800gbit") }
        return Int(bytes.rounded())
    }

    private static func bytesPerUnit(_ unit: String) -> Double? {
        let lower = unit.lowercased()
        for (suffix, scale) in [("bit", 1.0), ("bits", 1.0), ("bps", 1.0)] where lower.hasSuffix(suffix) {
            switch lower.dropLast(suffix.count) {
            case "": return scale / 8
            case "k": return 1e3 / 8
            case "m": return 1e6 / 8
            case "g": return 1e9 / 8
            default: return nil
            }
        }
        switch unit {
        case "B": return 1
        case "KB", "kB": return 1e3
        case "MB": return 1e6
        case "GB": return 1e9
        case "KiB": return 1024
        case "MiB": return 1_048_576
        case "GiB": return 1_073_741_824
        default: return nil
        }
    }

    /// `1mbit`, `780kbit`, `12.5kbit`; `unlimited` for nil.
    public static func text(_ bytesPerSecond: Int?) -> String {
        guard let bytesPerSecond else { return "unlimited" }
        let bits = Double(bytesPerSecond) * 8
        for (unit, size) in [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)] where bits >= size {
            return trim(bits / size) + unit
        }
        return trim(bits) + "bit"
    }

    private static func trim(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// A rate that could not be read, with the forms that can.
public struct ThrottleRateError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    /// Why a readable rate is refused; nil when the text is not a rate at all.
    public var reason: String?

    public init(text: String, reason: String? = nil) {
        self.text = text
        self.reason = reason
    }

    public var description: String {
        if let reason { return "'\(text.prefix(40))' \(reason)" }
        return "'\(text.prefix(40))' is not a rate: write a positive number and a unit, e.g. 256kbit, 1.5mbit, 100KB (per second; kbit counts bits, KB bytes)"
    }
}
