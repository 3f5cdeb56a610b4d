import CRE2Shim

extension LinearRegex {
    /// `text` with every match replaced by `template`, left to right, as `NSRegularExpression`
    /// did: after an empty match the next search starts one character later, and an empty match
    /// right after a non-empty one counts (`a*` → `-` turns `baaac` into `-b--c-`).
    ///
    /// Each search is linear in the text. Like every find-all over leftmost-first matches (RE2's
    /// own GlobalReplace, Go's, Rust's), a pattern whose preferred branch must read far ahead
    /// before a short match wins (`b+c|b` over a long run of b) costs more per match.
    public func replacingMatches(in text: String, with template: ReplacementTemplate) -> String {
        Self.withUTF8(text) { bytes in
            guard let replaced = replacingMatches(utf8: bytes, with: template) else { return text }
            return String(decoding: replaced, as: UTF8.self)
        }
    }

    /// The bytes with every match replaced, or nil when nothing matched.
    public func replacingMatches(utf8 bytes: UnsafeBufferPointer<UInt8>, with template: ReplacementTemplate) -> [UInt8]? {
        let count = template.highestGroup + 1
        var spans = [proxyapp_re2_span](repeating: proxyapp_re2_span(), count: count)
        var output: [UInt8] = []
        var copied = 0
        var start = 0
        var matched = false
        while start <= bytes.count {
            let found = spans.withUnsafeMutableBufferPointer { search(bytes, from: start, spans: $0.baseAddress, count: count) }
            guard found else { break }
            if !matched {
                output.reserveCapacity(bytes.count)
                matched = true
            }
            let ranges = spans.map(Self.range)
            let whole = ranges[0]!
            output.append(contentsOf: bytes[copied..<whole.lowerBound])
            template.append(to: &output, from: bytes, ranges: ranges)
            copied = whole.upperBound
            if whole.isEmpty {
                guard whole.upperBound < bytes.count else { break }
                start = whole.upperBound + Self.scalarLength(leadByte: bytes[whole.upperBound])
            } else {
                start = whole.upperBound
            }
        }
        guard matched else { return nil }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    /// The length of the UTF-8 sequence a byte starts (1 for a stray continuation byte).
    private static func scalarLength(leadByte byte: UInt8) -> Int {
        switch byte {
        case 0xF0...: return 4
        case 0xE0...: return 3
        case 0xC0...: return 2
        default: return 1
        }
    }
}
