/// Punycode (RFC 3492): the Bootstring encoding that turns a Unicode DNS label into the ASCII
/// after `xn--`, and back.
///
/// It exists so that a rule written as `bücher.example` and a request for
/// `xn--bcher-kva.example` compare equal: `HostName.normalized` encodes every non-ASCII label
/// with it. It works on Unicode scalars and knows nothing about `xn--`, case mapping or label
/// rules; those belong to `HostName`. Arithmetic is on `UInt32` and every step that could
/// overflow is checked (RFC 3492 §6.4), so hostile input gives nil, never a trap.
public enum Punycode {
    // Bootstring parameters for Punycode (RFC 3492 §5).
    private static let base: UInt32 = 36
    private static let tMin: UInt32 = 1
    private static let tMax: UInt32 = 26
    private static let skew: UInt32 = 38
    private static let damp: UInt32 = 700
    private static let initialBias: UInt32 = 72
    private static let initialN: UInt32 = 128
    private static let delimiter = UInt8(ascii: "-")

    /// The Punycode form of `label` without the `xn--` prefix, or nil when a counter overflows.
    ///
    /// Basic (ASCII) code points are copied first, in order and case as given, followed by `-`
    /// when there were any; an all-ASCII label therefore encodes to itself plus `-`.
    public static func encode(_ label: some StringProtocol) -> String? {
        let input = label.unicodeScalars.map(\.value)
        guard let total = UInt32(exactly: input.count) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2 + 1)
        for value in input where value < 0x80 {
            output.append(UInt8(truncatingIfNeeded: value))
        }
        let basicCount = UInt32(output.count)
        if basicCount > 0 { output.append(delimiter) }

        var n = initialN
        var delta: UInt32 = 0
        var bias = initialBias
        var handled = basicCount
        while handled < total {
            // The smallest code point not handled yet; one exists because handled < total.
            var next = UInt32.max
            for value in input where value >= n && value < next { next = value }
            guard let step = multiplied(next - n, handled + 1), let moved = added(delta, step) else { return nil }
            delta = moved
            n = next
            for value in input {
                if value < n {
                    guard let incremented = added(delta, 1) else { return nil }
                    delta = incremented
                } else if value == n {
                    appendVariableLengthInteger(delta, bias: bias, to: &output)
                    bias = adapt(delta: delta, points: handled + 1, first: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            guard let incremented = added(delta, 1), let nextN = added(n, 1) else { return nil }
            delta = incremented
            n = nextN
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The Unicode text that `encoded` (without `xn--`) stands for, or nil when it is not valid
    /// Punycode: a non-ASCII byte, a character that is not a digit, a truncated integer, an
    /// overflow, or a decoded value that is a surrogate or beyond U+10FFFF.
    ///
    /// Digits are read case-insensitively; basic code points keep their case.
    public static func decode(_ encoded: some StringProtocol) -> String? {
        let bytes = Array(encoded.utf8)
        var output: [Unicode.Scalar] = []
        output.reserveCapacity(bytes.count)
        var position = 0
        if let split = bytes.lastIndex(of: delimiter), split > 0 {
            for byte in bytes[..<split] {
                guard byte < 0x80 else { return nil }
                output.append(Unicode.Scalar(byte))
            }
            position = split + 1
        }

        var n = initialN
        var i: UInt32 = 0
        var bias = initialBias
        while position < bytes.count {
            let oldI = i
            var weight: UInt32 = 1
            var k = base
            while true {
                guard position < bytes.count, let digit = digitValue(bytes[position]) else { return nil }
                position += 1
                guard let product = multiplied(digit, weight), let sum = added(i, product) else { return nil }
                i = sum
                let t = threshold(k, bias: bias)
                if digit < t { break }
                guard let nextWeight = multiplied(weight, base - t) else { return nil }
                weight = nextWeight
                k += base
            }
            let points = UInt32(output.count + 1)
            bias = adapt(delta: i - oldI, points: points, first: oldI == 0)
            guard let nextN = added(n, i / points) else { return nil }
            n = nextN
            i %= points
            // n only grows from 128, so it is never basic; it may still be no scalar.
            guard let scalar = Unicode.Scalar(n) else { return nil }
            output.insert(scalar, at: Int(i))
            i += 1
        }

        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: output)
        return String(scalars)
    }

    // MARK: - Bootstring pieces

    /// Writes `q` as a generalized variable-length integer (RFC 3492 §3.3).
    private static func appendVariableLengthInteger(_ value: UInt32, bias: UInt32, to output: inout [UInt8]) {
        var q = value
        var k = base
        while true {
            let t = threshold(k, bias: bias)
            if q < t { break }
            output.append(digitCharacter(t + (q - t) % (base - t)))
            q = (q - t) / (base - t)
            k += base
        }
        output.append(digitCharacter(q))
    }

    /// The digit threshold for position `k` (RFC 3492 §3.4, clamped to tmin...tmax).
    private static func threshold(_ k: UInt32, bias: UInt32) -> UInt32 {
        if k <= bias { return tMin }
        if k >= bias + tMax { return tMax }
        return k - bias
    }

    /// Bias adaptation after each delta (RFC 3492 §6.1).
    private static func adapt(delta: UInt32, points: UInt32, first: Bool) -> UInt32 {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k: UInt32 = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    /// `a`–`z` for 0–25, `0`–`9` for 26–35 (lower case, as IDNA expects).
    private static func digitCharacter(_ digit: UInt32) -> UInt8 {
        digit < 26 ? UInt8(ascii: "a") + UInt8(digit) : UInt8(ascii: "0") + UInt8(digit - 26)
    }

    private static func digitValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0")) + 26
        default: return nil
        }
    }

    private static func added(_ a: UInt32, _ b: UInt32) -> UInt32? {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : sum
    }

    private static func multiplied(_ a: UInt32, _ b: UInt32) -> UInt32? {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? nil : product
    }
}
