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
        pairs = text.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            if let equals = piece.firstIndex(of: "=") {
                return Pair(name: piece[..<equals], value: piece[piece.index(after: equals)...])
            }
            return Pair(name: piece, value: nil)
        }
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
        var bytes: [UInt8] = []
        var changed = false
        let utf8 = Array(text.utf8)
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
                changed = true
            } else if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                      let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                changed = true
                index += 2
            } else {
                bytes.append(byte)
            }
            index += 1
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : String(text)
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

    /// The value of an ASCII hex digit (also used by the HAR reader's `\u` escapes).
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
