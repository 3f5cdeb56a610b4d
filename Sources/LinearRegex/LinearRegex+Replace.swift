import CRE2Shim

extension LinearRegex {
    /// `text` with every match replaced by `template`, left to right, as `NSRegularExpression`
    /// did: after an empty match the next search starts one character later, and an empty match
    /// right after a non-empty one counts (`a*` → `-` turns `baaac` into `-b--c-`).
    ///
    /// Each search is linear in the text, but, as with every find-all over leftmost-first
    /// matches (RE2's own GlobalReplace, Go's, Rust's), a pattern whose preferred branch reads far
    /// ahead before a short match wins (`b+c|b` over a run of b) makes each match cost up to the
    /// rest of the text: quadratic in all. The `shouldContinue` variants bound that.
    public func replacingMatches(in text: String, with template: ReplacementTemplate) -> String {
        (try? replacingMatches(in: text, with: template, shouldContinue: { true })) ?? text
    }

    /// The same, asking `shouldContinue` before each search after the first (a time limit, a
    /// client gone).
    /// - Throws: `ReplacementStopped` when `shouldContinue` said no.
    public func replacingMatches(in text: String, with template: ReplacementTemplate,
                                 shouldContinue: () -> Bool) throws(ReplacementStopped) -> String {
        let replaced = Self.withUTF8(text) { bytes in replace(bytes, template, shouldContinue) }
        guard let replaced else { throw ReplacementStopped() }
        return replaced.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// The bytes with every match replaced, or nil when nothing matched.
    public func replacingMatches(utf8 bytes: UnsafeBufferPointer<UInt8>, with template: ReplacementTemplate) -> [UInt8]? {
        replace(bytes, template, { true }) ?? nil
    }

    /// The bytes with every match replaced, or nil when nothing matched; `shouldContinue` as above.
    /// - Throws: `ReplacementStopped` when `shouldContinue` said no.
    public func replacingMatches(utf8 bytes: UnsafeBufferPointer<UInt8>, with template: ReplacementTemplate,
                                 shouldContinue: () -> Bool) throws(ReplacementStopped) -> [UInt8]? {
        guard let replaced = replace(bytes, template, shouldContinue) else { throw ReplacementStopped() }
        return replaced
    }

    /// The replaced bytes; `.some(nil)` when nothing matched, nil when stopped.
    private func replace(_ bytes: UnsafeBufferPointer<UInt8>, _ template: ReplacementTemplate,
                         _ shouldContinue: () -> Bool) -> [UInt8]?? {
        var progress = ReplacementProgress()
        continueReplacing(utf8: bytes, with: template, progress: &progress, shouldContinue: shouldContinue)
        guard progress.isFinished else { return nil }
        return .some(progress.result)
    }

    /// Replaces matches in `bytes` from where `progress` stands until every match is replaced or
    /// `shouldContinue` (asked before each search after a match, but never before a call's
    /// first) says no. Call it again
    /// with the same bytes and progress to go on: a long replacement runs in slices, so other
    /// work can have the thread in between (see `ReplacementProgress`).
    public func continueReplacing(utf8 bytes: UnsafeBufferPointer<UInt8>, with template: ReplacementTemplate,
                                  progress: inout ReplacementProgress, shouldContinue: () -> Bool) {
        guard !progress.isFinished else { return }
        let count = template.highestGroup + 1
        var spans = [proxyapp_re2_span](repeating: proxyapp_re2_span(), count: count)
        var searched = false  // each call makes one search at least, so slices always progress
        while progress.start <= bytes.count {
            if progress.matched, searched, !shouldContinue() { return }
            searched = true
            let start = progress.start
            let found = spans.withUnsafeMutableBufferPointer { search(bytes, from: start, spans: $0.baseAddress, count: count) }
            guard found else { break }
            if !progress.matched {
                progress.output.reserveCapacity(bytes.count)
                progress.matched = true
            }
            let ranges = spans.map(Self.range)
            let whole = ranges[0]!
            progress.output.append(contentsOf: bytes[progress.copied..<whole.lowerBound])
            template.append(to: &progress.output, from: bytes, ranges: ranges)
            progress.copied = whole.upperBound
            if whole.isEmpty {
                guard whole.upperBound < bytes.count else { break }
                progress.start = whole.upperBound + Self.scalarLength(leadByte: bytes[whole.upperBound])
            } else {
                progress.start = whole.upperBound
            }
        }
        if progress.matched { progress.output.append(contentsOf: bytes[progress.copied...]) }
        progress.isFinished = true
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

/// Where a replacement of every match stands between two `continueReplacing` calls over the
/// same bytes: the output so far and where the next search starts.
public struct ReplacementProgress: Sendable {
    fileprivate var output: [UInt8] = []
    fileprivate var copied = 0
    fileprivate var start = 0
    fileprivate var matched = false
    /// Every match has been replaced.
    public fileprivate(set) var isFinished = false

    public init() {}

    /// Once finished: the replaced bytes, or nil when nothing matched.
    public var result: [UInt8]? { isFinished && matched ? output : nil }
}

/// A replacement its `shouldContinue` stopped before the end.
public struct ReplacementStopped: Error, Sendable, Equatable {
    public init() {}
}
