import CRE2Shim

/// A compiled regular expression that matches in time linear in its input: RE2 (Debian's
/// libre2-dev) behind `CRE2Shim`'s C functions.
///
/// Every pattern ProxyApp evaluates on traffic or captures comes through here (rules'
/// `path_regex` and rewrite `regex`, the filter language, the capture store's SQL regex
/// functions). A backtracking engine (`NSRegularExpression`) let one pattern such as `(a+)+$`
/// hold an event loop for seconds on a 2 KB URL; RE2 cannot: it has no backreferences or
/// lookaround, and its memory is bounded (`memoryLimit`). Patterns using what RE2 cannot run are
/// refused when compiled, with a reason in words and the position (`LinearRegexError`).
///
/// Offsets and ranges are in UTF-8 bytes (RE2's unit; a Swift `String` stores UTF-8, so searching
/// one copies nothing). The object is immutable after `init` and safe to share across threads.
public final class LinearRegex: @unchecked Sendable {
    // @unchecked: `handle` is only read after init; RE2's matching functions are const and
    // documented thread-safe, and the object is freed only in deinit.

    /// How a pattern is compiled.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// Letters match either case (Unicode simple case folding).
        public static let caseInsensitive = Options(rawValue: Int32(PROXYAPP_RE2_CASE_INSENSITIVE))
        /// `.` matches `\n` as well.
        public static let dotMatchesNewlines = Options(rawValue: Int32(PROXYAPP_RE2_DOT_NL))
        /// The pattern is literal text: no character is special.
        public static let literal = Options(rawValue: Int32(PROXYAPP_RE2_LITERAL))
    }

    /// The longest pattern accepted, in UTF-8 bytes.
    public static let maximumPatternLength = 65_536
    /// What one compiled pattern may use, for its program and the caches matching builds (RE2's
    /// `max_mem`, at RE2's default). A pattern whose program alone would not fit is refused.
    public static let memoryLimit = 8 << 20

    /// The pattern as given.
    public let pattern: String
    public let options: Options
    /// The number of capturing groups (`(…)` and `(?P<name>…)`).
    public let groupCount: Int
    private let handle: OpaquePointer

    /// Compiles `pattern`.
    /// - Throws: `LinearRegexError` naming the construct RE2 cannot run (backreferences,
    ///   lookaround, possessive quantifiers, …) or the syntax error, in words, with its position.
    public init(_ pattern: String, options: Options = []) throws(LinearRegexError) {
        let length = pattern.utf8.count
        guard length <= Self.maximumPatternLength else {
            throw LinearRegexError(
                pattern: pattern, position: nil,
                reason: "the pattern is too long (\(length) bytes; at most \(Self.maximumPatternLength))")
        }
        let source: String
        if options.contains(.literal) {
            source = pattern
        } else {
            switch RegexSyntaxScreen.screen(pattern) {
            case .success(let translated): source = translated
            case .failure(let refusal): throw refusal
            }
        }
        guard let handle = Self.withUTF8(source, { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                proxyapp_re2_new($0.baseAddress, $0.count, options.rawValue, Int64(Self.memoryLimit))
            }
        }) else {
            throw LinearRegexError(pattern: pattern, position: nil, reason: "out of memory compiling the pattern")
        }
        let code = Int(proxyapp_re2_error_code(handle))
        guard code == PROXYAPP_RE2_OK else {
            var fragmentLength = 0
            let fragmentStart = proxyapp_re2_error_fragment(handle, &fragmentLength)
            let fragment = fragmentStart.map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: fragmentLength), as: UTF8.self)
            } ?? ""
            proxyapp_re2_free(handle)
            throw RE2ErrorReason.error(code: code, fragment: fragment, pattern: pattern)
        }
        self.pattern = pattern
        self.options = options
        self.groupCount = Int(proxyapp_re2_group_count(handle))
        self.handle = handle
    }

    deinit {
        proxyapp_re2_free(handle)
    }

    /// RE2's measure of the compiled program's size (instructions).
    public var programSize: Int { Int(proxyapp_re2_program_size(handle)) }

    // MARK: - Searching

    /// True when the regex matches anywhere in `text`.
    public func matches(_ text: String) -> Bool {
        Self.withUTF8(text) { matches(utf8: $0) }
    }

    /// True when the regex matches anywhere in the UTF-8 bytes.
    public func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        search(bytes, from: 0, spans: nil, count: 0)
    }

    /// True when the regex matches anywhere in the UTF-8 bytes.
    public func matches(utf8 bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { matches(utf8: $0) }
    }

    /// The leftmost match in `bytes` at or after `start` (the bytes before it are context for
    /// `^` and `\b`): the whole match, then each group (nil for a group that took no part).
    public func firstMatch(utf8 bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> [Range<Int>?]? {
        let count = groupCount + 1
        var spans = [proxyapp_re2_span](repeating: proxyapp_re2_span(), count: count)
        let found = spans.withUnsafeMutableBufferPointer { search(bytes, from: start, spans: $0.baseAddress, count: count) }
        return found ? spans.map(Self.range) : nil
    }

    /// The leftmost match in `text`: the whole match, then each group (nil for a group that took
    /// no part), as ranges of `text`.
    public func firstMatch(in text: String) -> [Range<String.Index>?]? {
        guard let ranges = Self.withUTF8(text, { firstMatch(utf8: $0) }) else { return nil }
        let utf8 = text.utf8
        return ranges.map { range in
            range.map { utf8.index(utf8.startIndex, offsetBy: $0.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: $0.upperBound) }
        }
    }

    /// One RE2 search; `spans` receives `count` submatches when it is not nil.
    func search(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int,
                spans: UnsafeMutablePointer<proxyapp_re2_span>?, count: Int) -> Bool {
        guard start >= 0, start <= bytes.count else { return false }
        return bytes.withMemoryRebound(to: CChar.self) { chars in
            proxyapp_re2_search(handle, chars.baseAddress, chars.count, start, spans, Int32(count)) == 1
        }
    }

    static func range(_ span: proxyapp_re2_span) -> Range<Int>? {
        span.start < 0 ? nil : Int(span.start)..<Int(span.end)
    }

    /// Runs `body` on the UTF-8 bytes of `text`, without copying a native string.
    static func withUTF8<Value>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Value) -> Value {
        if let value = text.utf8.withContiguousStorageIfAvailable(body) { return value }
        var copy = text
        return copy.withUTF8(body)
    }
}
