import ProxyModel

/// `name=value&name=value` text as in a query string or an `application/x-www-form-urlencoded`
/// body: split into pairs that keep their raw text, and decoded as browsers decode them.
///
/// One parser serves the HAR writer (queryString, postData.params) and the redactor, which must
/// rewrite one value while keeping every other byte as captured.
struct URLEncodedPairs {
    /// One `name=value` piece, still percent-encoded; `value` is nil when there was no `=`.
    struct Pair {
        var name: Substring
        var value: Substring?
    }

    var pairs: [Pair]

    /// Splits on `&` (empty pieces are dropped, as URLSearchParams does) and at each piece's first `=`.
    init(_ text: Substring) {
        pairs = PercentDecoding.formPairs(text.utf8).map { Pair(name: Substring($0.name), value: $0.value.map { Substring($0) }) }
    }

    /// The query of a request path: what follows the first `?`, up to a `#`; nil without a `?`.
    static func query(ofPath path: String) -> Substring? {
        let beforeFragment = path[..<(path.firstIndex(of: "#") ?? path.endIndex)]
        guard let question = beforeFragment.firstIndex(of: "?") else { return nil }
        return beforeFragment[beforeFragment.index(after: question)...]
    }

    /// Percent-decodes `text` with `+` as a space; a `%` not followed by two hex digits stays as
    /// it is, and bytes that are not UTF-8 become U+FFFD.
    static func decode(_ text: Substring) -> String {
        PercentDecoding.formDecoded(text)
    }

    /// The pairs decoded, in order (a piece without `=` has the value "").
    var decoded: [(name: String, value: String)] {
        pairs.map { (Self.decode($0.name), Self.decode($0.value ?? "")) }
    }

    /// The text again, each piece as it was unless `transform` returned a new raw value for it.
    func rewritten(_ transform: (Pair) -> Substring?) -> String {
        var text = ""
        for (index, pair) in pairs.enumerated() {
            if index > 0 { text += "&" }
            text += pair.name
            if let newValue = transform(pair) {
                text += "="
                text += newValue
            } else if let value = pair.value {
                text += "="
                text += value
            }
        }
        return text
    }
}
