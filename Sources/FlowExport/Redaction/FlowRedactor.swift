import BodyCodec
import ProxyModel

/// Removes credentials from a flow so its export can be shared: header values, query parameters
/// and URL-encoded form fields whose names look secret become `REDACTED`.
///
/// Rules:
/// - `Authorization`, `Proxy-Authorization`: the whole value.
/// - `Cookie`: every value, names kept (`a=REDACTED; b=REDACTED`); `Set-Cookie`: the value,
///   name and attributes kept.
/// - Any other header whose name `SecretName` matches: the whole value.
/// - Query parameters in the path (and in `Referer` and `Location` URLs) and fields of an
///   `application/x-www-form-urlencoded` request body whose names match: the value.
///
/// Not redacted: other body content (JSON, multipart, response bodies), URL paths, and form
/// bodies whose `Content-Encoding` cannot be decoded. The HAR writer applies it before
/// deriving cookies, query strings and form parameters, and curl export can use it alike.
public enum FlowRedactor {
    /// What replaces a secret.
    public static let placeholder = "REDACTED"

    public static func redact(_ flow: Flow) -> Flow {
        var flow = flow
        flow.path = redactQuery(inURL: flow.path)
        flow.requestHeaders = flow.requestHeaders.map(redactHeader)
        flow.responseHeaders = flow.responseHeaders.map(redactHeader)
        redactFormBody(of: &flow)
        return flow
    }

    static func redactHeader(_ header: HeaderField) -> HeaderField {
        var header = header
        switch header.name.lowercased() {
        case "cookie":
            header.value = redactCookieHeader(header.value)
        case "set-cookie":
            header.value = redactSetCookie(header.value)
        case "authorization", "proxy-authorization":
            header.value = placeholder
        case "referer", "location":
            header.value = redactQuery(inURL: header.value)
        default:
            if SecretName.matches(header.name) { header.value = placeholder }
        }
        return header
    }

    /// `a=1; b=2` → `a=REDACTED; b=REDACTED`.
    static func redactCookieHeader(_ value: String) -> String {
        value.split(separator: ";", omittingEmptySubsequences: true).map { piece in
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

    /// A path or URL with the values of secret-looking query parameters replaced; the rest,
    /// fragment included, unchanged.
    static func redactQuery(inURL url: String) -> String {
        guard let query = URLEncodedPairs.query(ofPath: url) else { return url }
        let pairs = URLEncodedPairs(query)
        guard pairs.pairs.contains(where: isSecret) else { return url }
        let rewritten = pairs.rewritten { isSecret($0) ? Substring(placeholder) : nil }
        return String(url[..<query.startIndex]) + rewritten + url[query.endIndex...]
    }

    private static func isSecret(_ pair: URLEncodedPairs.Pair) -> Bool {
        SecretName.matches(URLEncodedPairs.decode(pair.name))
    }

    /// Redacts secret fields of a URL-encoded form body. An encoded body is decoded first and
    /// stored decoded (its `Content-Encoding` removed); sizes and `Content-Length` follow.
    private static func redactFormBody(of flow: inout Flow) {
        guard let contentType = flow.requestHeaders.firstValue(named: "Content-Type"),
              MediaType(contentType).isURLEncodedForm, !flow.requestBody.bytes.isEmpty else { return }
        let encoding = flow.requestHeaders.firstValue(named: "Content-Encoding")
        guard case .decoded(let bytes) = BodyDecoder.decode([UInt8](flow.requestBody.bytes), contentEncoding: encoding)
        else { return }
        let pairs = URLEncodedPairs(Substring(decoding: bytes, as: UTF8.self))
        let wasEncoded = encoding.map { !ContentEncoding.list(from: $0).encodings.isEmpty } ?? false
        guard pairs.pairs.contains(where: isSecret) || wasEncoded else { return }
        let redacted = Array(pairs.rewritten { isSecret($0) ? Substring(placeholder) : nil }.utf8)
        let oldCount = Int64(flow.requestBody.bytes.count)
        flow.requestBody.bytes = .init(redacted)
        flow.requestBody.size = max(flow.requestBody.size + Int64(redacted.count) - oldCount, Int64(redacted.count))
        flow.requestHeaders.removeAll { $0.name.caseInsensitiveEquals("content-encoding") }
        for index in flow.requestHeaders.indices where flow.requestHeaders[index].name.caseInsensitiveEquals("content-length") {
            flow.requestHeaders[index].value = String(flow.requestBody.size)
        }
    }
}
