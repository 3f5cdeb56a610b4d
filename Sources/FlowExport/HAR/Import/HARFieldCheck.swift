import ProxyModel

/// Refuses text an imported flow could store but never send as it reads: a NUL in a URL was
/// stored, then shown and replayed (curl, raw export) as a different URL; a CR or LF in a status
/// text or version would split the first line of a raw export. Live capture cannot produce any
/// of these (the HTTP parser refuses them), so an import refuses them too, with the field's JSON
/// path. Each check returns the reason, or nil when the text is fine.
enum HARFieldCheck {
    /// RFC 9110 `token` characters besides letters and digits.
    private static let tokenSymbols = Set("!#$%&'*+-.^_`|~".unicodeScalars)

    /// A method is a token: `GET`, `PURGE`, `M-SEARCH`.
    static func method(_ method: String) -> String? {
        let isToken = method.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || tokenSymbols.contains(scalar))
        }
        return isToken ? nil : "'\(method)' is not an HTTP method (letters, digits and !#$%&'*+-.^_`|~ only)"
    }

    /// No control character (C0, DEL) anywhere in a URL: a real one percent-encodes them.
    static func url(_ url: String) -> String? {
        firstControl(in: url).map { "a control character (\($0)) in the URL: a URL carries it percent-encoded" }
    }

    /// No control character in a header name (`:authority` and other names that are not
    /// tokens are kept: HTTP/2 exports have them).
    static func headerName(_ name: String) -> String? {
        firstControl(in: name).map { "a control character (\($0)) in a header name" }
    }

    /// No NUL, CR or LF in a request header value: a replay (curl sends `-H` values as they
    /// are) would put a LF there on the wire, where an origin reads what follows as a header of
    /// its own, unseen in the flow. A response header value may hold LF-separated lines
    /// (exporters fold repeated `Set-Cookie` headers that way; a raw export writes one line
    /// each), but no NUL and no CR outside a CRLF.
    static func headerValue(_ value: String, inRequest: Bool) -> String? {
        guard value.utf8.contains(where: { $0 == 0 || $0 == 13 || $0 == 10 }) else { return nil }
        let scalars = Array(value.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let lineBreak = scalar == "\r" || scalar == "\n"
            let folded = scalar == "\n" || scalar == "\r" && index + 1 < scalars.count && scalars[index + 1] == "\n"
            if scalar == "\0" || lineBreak && (inRequest || !folded) {
                return "a line break or NUL (\(TerminalText.escaped(String(scalar)))) in a header value"
                    + (inRequest ? ": a replay would send what follows it as a header of its own" : "")
            }
        }
        return nil
    }

    /// No NUL, CR or LF in a version or a status text.
    static func lineText(_ text: String?) -> String? {
        guard let text, let bad = text.unicodeScalars.first(where: { $0 == "\0" || $0 == "\r" || $0 == "\n" }) else {
            return nil
        }
        return "a line break or NUL (\(TerminalText.escaped(String(bad)))) where the HTTP message has one line"
    }

    /// `\x00` for the first C0 control or DEL of `text`.
    private static func firstControl(in text: String) -> String? {
        text.unicodeScalars.first { $0.value < 0x20 || $0.value == 0x7F }.map { TerminalText.escaped(String($0)) }
    }
}
