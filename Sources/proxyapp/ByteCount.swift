import ArgumentParser

/// A size given on the command line: `16MiB`, `512k`, `1048576`, `2G` (binary multiples).
struct ByteCount: ExpressibleByArgument, CustomStringConvertible {
    var bytes: Int

    init(bytes: Int) {
        self.bytes = bytes
    }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = text.prefix { $0.isNumber }
        guard let value = Int(digits) else { return nil }
        let multiplier: Int
        switch text.dropFirst(digits.count) {
        case "", "b": multiplier = 1
        case "k", "kb", "kib": multiplier = 1 << 10
        case "m", "mb", "mib": multiplier = 1 << 20
        case "g", "gb", "gib": multiplier = 1 << 30
        default: return nil
        }
        self.bytes = value * multiplier
    }

    var description: String { ByteCount.format(Int64(bytes)) }

    /// `512 B`, `1.5 KiB`, `16.0 MiB`.
    static func format(_ count: Int64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}

import Foundation
