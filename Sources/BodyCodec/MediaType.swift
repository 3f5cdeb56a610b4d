/// What a `Content-Type` value says about a body: whether it is text a reader wants to see (or
/// a rewrite rule may edit) as text, and whether it is a URL-encoded form.
public struct MediaType: Sendable {
    /// The type and subtype in lower case, without parameters (`application/json`).
    public let essence: String

    public init(_ contentType: String) {
        var slice = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        essence = slice.lowercased()
    }

    /// `text/*`, JSON, XML, JavaScript, URL-encoded forms and `+json`/`+xml` types.
    public var isTextual: Bool {
        essence.hasPrefix("text/") || essence.contains("json") || essence.contains("xml")
            || essence.contains("javascript") || essence.contains("ecmascript")
            || essence == "application/x-www-form-urlencoded"
    }

    public var isURLEncodedForm: Bool { essence == "application/x-www-form-urlencoded" }
}
