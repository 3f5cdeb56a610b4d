/// What a `Content-Type` value says about a body: whether it is text a reader wants to see as
/// text, and whether it is a URL-encoded form.
struct MediaType {
    /// The type and subtype in lower case, without parameters (`application/json`).
    let essence: String

    init(_ contentType: String) {
        let beforeParameters = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        essence = beforeParameters.trimmingHTTPWhitespace().lowercased()
    }

    /// `text/*`, JSON, XML, JavaScript, URL-encoded forms and `+json`/`+xml` types.
    var isTextual: Bool {
        essence.hasPrefix("text/") || essence.contains("json") || essence.contains("xml")
            || essence.contains("javascript") || essence.contains("ecmascript")
            || essence == "application/x-www-form-urlencoded"
    }

    var isURLEncodedForm: Bool { essence == "application/x-www-form-urlencoded" }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs, the whitespace of HTTP header syntax
    /// (cheaper than Foundation's Unicode-aware trimming on the export's hot path).
    func trimmingHTTPWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
