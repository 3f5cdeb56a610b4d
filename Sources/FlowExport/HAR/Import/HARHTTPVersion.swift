import Foundation

/// Normalises the `httpVersion` spellings of HAR writers to the one a `Flow` uses.
///
/// Chrome writes `http/1.1`, `http/2.0`, `h2` or `h3` (and an empty string for cached entries),
/// Firefox `HTTP/2` and `HTTP/3`, the rest `HTTP/1.1`. Unrecognised text is kept as written.
enum HARHTTPVersion {
    static func normalize(_ version: String?) -> String? {
        guard let version else { return nil }
        let trimmed = version.trimmingCharacters(in: .whitespaces)
        switch trimmed.lowercased() {
        case "": return nil
        case "http/1.0", "http/1": return "HTTP/1.0"
        case "http/1.1": return "HTTP/1.1"
        case "http/2", "http/2.0", "h2", "h2c": return "HTTP/2.0"
        case "http/3", "http/3.0", "h3": return "HTTP/3.0"
        default: return trimmed
        }
    }

    /// The request's version, else the response's, else HTTP/1.1.
    static func forFlow(request: String?, response: String?) -> String {
        normalize(request) ?? normalize(response) ?? "HTTP/1.1"
    }
}
