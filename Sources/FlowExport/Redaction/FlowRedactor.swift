import BodyCodec
import ProxyModel

/// Removes credentials from a flow so its export can be shared: header values, query parameters
/// and URL-encoded form fields whose names look secret become `REDACTED`.
///
/// Rules:
/// - `Authorization`, `Proxy-Authorization`: the whole value.
/// - `Cookie`: every value, names kept (`a=REDACTED; b=REDACTED`); `Set-Cookie`: the value,
///   name and attributes kept. A value holding several cookies on separate lines (as some
///   exporters fold them) has each line redacted.
/// - Any other header whose name `SecretName` matches: the whole value.
/// - `key=value` pairs whose names match, in the query and in the fragment (OAuth's implicit flow
///   puts `access_token` there) of: the path, the `:path` pseudo-header, `Referer`, `Location`,
///   `Content-Location`, the `url=` of `Refresh`, every `<…>` of `Link`, and any other header
///   whose value starts with `http://`, `https://` or `/`: the value. Likewise fields of an
///   `application/x-www-form-urlencoded` request body.
///
/// Not redacted: other body content (JSON, multipart, response bodies), URL paths, and form
/// bodies whose `Content-Encoding` cannot be decoded. The HAR writer applies it before
/// deriving cookies, query strings and form parameters, and curl export can use it alike.
public enum FlowRedactor {
    /// What replaces a secret.
    public static let placeholder = "REDACTED"

    public static func redact(_ flow: Flow) -> Flow {
        var flow = flow
        flow.path = redactURL(flow.path)
        flow.requestHeaders = flow.requestHeaders.map(redactHeader)
        flow.responseHeaders = flow.responseHeaders.map(redactHeader)
        redactFormBody(of: &flow)
        if flow.hasOriginSide { redactOriginSide(of: &flow) }
        return flow
    }

    /// The same rules on the request as forwarded and the response as the origin sent it (a
    /// rewrite may have added a secret the client never sent).
    private static func redactOriginSide(of flow: inout Flow) {
        let side = redact(flow.originSide)
        if var request = flow.forwardedRequest {
            request.path = side.path
            request.headers = side.requestHeaders
            if request.body != nil { request.body = side.requestBody }
            flow.forwardedRequest = request
        }
        flow.originResponse?.headers = side.responseHeaders
    }

    static func redactHeader(_ header: HeaderField) -> HeaderField {
        var header = header
        switch header.name.lowercased() {
        case "cookie":
            header.value = redactCookieHeader(header.value)
        case "set-cookie":
            header.value = header.value.split(whereSeparator: \.isNewline).map { redactSetCookie(String($0)) }.joined(separator: "\n")
        case "authorization", "proxy-authorization":
            header.value = placeholder
        case ":authority", ":method", ":scheme", ":protocol", ":status":
            break  // `:authority` is the host, though its name contains "auth"
        case ":path", "referer", "location", "content-location":
            header.value = redactURL(header.value)
        case "refresh":
            header.value = redactRefresh(header.value)
        case "link":
            header.value = redactLink(header.value)
        default:
            if SecretName.matches(header.name) {
                header.value = placeholder
            } else if ["http://", "https://", "/"].contains(where: { header.value.lowercased().hasPrefix($0) }) {
                header.value = redactURL(header.value)
            }
        }
        return header
    }

    /// `a=1; b=2` → `a=REDACTED; b=REDACTED` (cookies on separate lines are separate cookies).
    static func redactCookieHeader(_ value: String) -> String {
        value.split(whereSeparator: { $0 == ";" || $0.isNewline }).map { piece in
            let trimmed = piece.trimmingHTTPWhitespace()
            guard let equals = trimmed.firstIndex(of: "=") else { return placeholder }
            return "\(trimmed[..<equals])=\(placeholder)"
        }.joined(separator: "; ")
    }

    /// `sid=abc; Path=/; HttpOnly` → `sid=REDACTED; Path=/; HttpOnly`.
    static func redactSetCookie(_ value: String) -> String {
        let semicolon = value.firstIndex(of: ";") ?? value.endIndex
        let pair = value[..<semicolon]
        let name = pair.firstIndex(of: "=").map { pair[..<$0].trimmingHTTPWhitespace() }
        let redactedPair = name.map { "\($0)=\(placeholder)" } ?? placeholder
        return redactedPair + value[semicolon...]
    }

    /// A path or URL with the values of secret-looking `key=value` pairs replaced in its query
    /// and in its fragment; the rest unchanged.
    static func redactURL(_ url: String) -> String {
        let hash = url.firstIndex(of: "#")
        var beforeFragment = String(url[..<(hash ?? url.endIndex)])
        if let question = beforeFragment.firstIndex(of: "?") {
            let queryStart = beforeFragment.index(after: question)
            beforeFragment = String(beforeFragment[..<queryStart]) + redactPairs(beforeFragment[queryStart...])
        }
        guard let hash else { return beforeFragment }
        return beforeFragment + "#" + redactPairs(url[url.index(after: hash)...])
    }

    /// `name=value&…` with secret values replaced; unchanged (byte for byte) when none is secret.
    private static func redactPairs(_ text: Substring) -> String {
        let pairs = URLEncodedPairs(text)
        guard pairs.pairs.contains(where: isSecret) else { return String(text) }
        return pairs.rewritten { isSecret($0) ? Substring(placeholder) : nil }
    }

    /// `0; url=https://a/?token=t` → `0; url=https://a/?token=REDACTED` (quotes kept).
    static func redactRefresh(_ value: String) -> String {
        guard let range = value.range(of: "url", options: .caseInsensitive),
              let equals = value[range.upperBound...].firstIndex(of: "=") else { return value }
        var target = value[value.index(after: equals)...].drop { $0 == " " }
        var closingQuote = ""
        if let quote = target.first, quote == "'" || quote == "\"" {
            target = target.dropFirst()
            if target.last == quote {
                target = target.dropLast()
                closingQuote = String(quote)
            }
        }
        return String(value[..<target.startIndex]) + redactURL(String(target)) + closingQuote
    }

    /// Every `<URL>` of a `Link` value redacted; parameters (`rel=…`) unchanged.
    static func redactLink(_ value: String) -> String {
        var result = ""
        var rest = value[...]
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += String(rest[...open]) + redactURL(String(rest[rest.index(after: open)..<close])) + ">"
            rest = rest[rest.index(after: close)...]
        }
        return result + String(rest)
    }

    private static func isSecret(_ pair: URLEncodedPairs.Pair) -> Bool {
        SecretName.matches(URLEncodedPairs.decode(pair.name))
    }

    /// Redacts secret fields of a URL-encoded form body. An encoded body is decoded first and
    /// stored decoded (its `Content-Encoding` removed); sizes and `Content-Length` follow.
    private static func redactFormBody(of flow: inout Flow) {
        guard let contentType = flow.requestHeaders.first(named: "Content-Type"),
              MediaType(contentType).isURLEncodedForm, !flow.requestBody.bytes.isEmpty else { return }
        let encoding = flow.requestHeaders.first(named: "Content-Encoding")
        guard case .decoded(let bytes) = BodyDecoder.decode([UInt8](flow.requestBody.bytes), contentEncoding: encoding)
        else { return }
        let pairs = URLEncodedPairs(Substring(decoding: bytes, as: UTF8.self))
        let wasEncoded = encoding.map { !ContentEncoding.list(from: $0).encodings.isEmpty } ?? false
        guard pairs.pairs.contains(where: isSecret) || wasEncoded else { return }
        let redacted = Array(pairs.rewritten { isSecret($0) ? Substring(placeholder) : nil }.utf8)
        let oldCount = Int64(flow.requestBody.bytes.count)
        flow.requestBody.bytes = .init(redacted)
        flow.requestBody.size = max(flow.requestBody.size + Int64(redacted.count) - oldCount, Int64(redacted.count))
        flow.requestHeaders.removeAll { $0.name.equalsIgnoringASCIICase("content-encoding") }
        for index in flow.requestHeaders.indices where flow.requestHeaders[index].name.equalsIgnoringASCIICase("content-length") {
            flow.requestHeaders[index].value = String(flow.requestBody.size)
        }
    }
}
