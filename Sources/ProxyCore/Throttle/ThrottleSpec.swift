/// A throttle written on one line, as `--throttle` takes it: a preset (`3g`), figures
/// (`down=1mbit,up=256kbit,latency=100ms`), or a preset with figures replaced (`3g,latency=300ms`).
/// The rules file's `throttle:` mapping takes the same keys (`preset`, `down`, `up`, `latency`).
public enum ThrottleSpec {
    public static func parse(_ text: String) throws(ThrottleSpecError) -> ThrottleProfile {
        var profile = ThrottleProfile()
        var sawFigure = false
        var keys: Set<String> = []
        for (index, part) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let item = part.trimmingCharacters(in: " ")
            guard let equals = item.firstIndex(of: "=") else {
                guard index == 0, let preset = ThrottleProfile.preset(named: String(item)) else {
                    throw ThrottleSpecError(reason: "'\(item.prefix(40))' is neither a preset (\(presetNames)) nor key=value "
                                            + "(down=, up=, latency=)")
                }
                profile = preset
                continue
            }
            sawFigure = true
            let key = item[..<equals].trimmingCharacters(in: " ").lowercased()
            guard keys.insert(key).inserted else {
                throw ThrottleSpecError(reason: "\(key)= is given twice: give each figure once")
            }
            try apply(key: String(item[..<equals]), value: String(item[item.index(after: equals)...]), to: &profile)
        }
        if sawFigure { profile.preset = profile.preset.map { $0 + "*" } }
        guard !profile.isNone else {
            throw ThrottleSpecError(reason: "this throttle limits nothing: give a preset (\(presetNames)) or down=, up=, latency=")
        }
        return profile
    }

    /// Sets one figure (`down`, `up`, `latency`) of `profile` from its text.
    public static func apply(key: String, value: String, to profile: inout ThrottleProfile) throws(ThrottleSpecError) {
        do {
            switch key.trimmingCharacters(in: " ").lowercased() {
            case "down": profile.downBytesPerSecond = try ThrottleRate.parse(value)
            case "up": profile.upBytesPerSecond = try ThrottleRate.parse(value)
            case "latency": profile.latencyMilliseconds = try latencyMilliseconds(value)
            default: throw ThrottleSpecError(reason: "unknown throttle figure '\(key.prefix(40))': use down=, up= or latency=")
            }
        } catch let error as ThrottleRateError {
            throw ThrottleSpecError(reason: "\(key)=\(error.description)")
        } catch let error as ThrottleSpecError {
            throw error
        } catch {
            throw ThrottleSpecError(reason: "\(key)=\(value.prefix(40)) cannot be read")
        }
    }

    /// `100ms`, `1.5s`, `250` (milliseconds); 0 to 60 s.
    public static func latencyMilliseconds(_ text: String) throws(ThrottleSpecError) -> Int {
        let trimmed = text.trimmingCharacters(in: " ").lowercased()
        var number = Substring(trimmed)
        var scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
        } else if number.hasSuffix("s") {
            number = number.dropLast()
            scale = 1000
        }
        guard !number.isEmpty, number.count <= 12, number.allSatisfy({ ("0"..."9").contains($0) || $0 == "." }),
              let value = Double(number), value * scale <= 60_000 else {
            throw ThrottleSpecError(reason: "latency '\(text.prefix(40))' must be a duration up to 60s, e.g. 100ms or 1.5s")
        }
        return Int((value * scale).rounded())
    }

    public static var presetNames: String { ThrottleProfile.presets.map(\.name).joined(separator: ", ") }
}

/// Why a throttle could not be read, in words naming what can be written.
public struct ThrottleSpecError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> Substring {
        var text = self
        while text.first == character { text.removeFirst() }
        while text.last == character { text.removeLast() }
        return text
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> Substring {
        Substring(self).trimmingCharacters(in: character)
    }
}
