import Foundation

/// A cookie as a HAR entry lists it: from a request's `Cookie` header (name and value only) or
/// from a response's `Set-Cookie` (with its attributes).
struct HARCookie {
    var name: String
    var value: String
    var path: String?
    var domain: String?
    var expires: Date?
    var httpOnly = false
    var secure = false
    var sameSite: String?

    /// Every `name=value` of a `Cookie` header value (`a=1; b=2`, or one per line as some
    /// exporters fold them); pieces without `=` are nameless cookies, as browsers treat them.
    static func requestCookies(_ header: String) -> [HARCookie] {
        header.split(whereSeparator: { $0 == ";" || $0.isNewline }).compactMap { piece in
            let trimmed = piece.trimmingHTTPWhitespace()
            guard !trimmed.isEmpty else { return nil }
            guard let equals = trimmed.firstIndex(of: "=") else { return HARCookie(name: "", value: trimmed) }
            return HARCookie(name: String(trimmed[..<equals]).trimmingHTTPWhitespace(),
                             value: String(trimmed[trimmed.index(after: equals)...]).trimmingHTTPWhitespace())
        }
    }

    /// The cookies of a `Set-Cookie` header value: one per line, since some exporters fold
    /// several `Set-Cookie` headers into one value separated by newlines.
    static func responseCookies(_ header: String, received: Date) -> [HARCookie] {
        header.split(whereSeparator: \.isNewline).compactMap { responseCookie(String($0), received: received) }
    }

    /// The cookie a `Set-Cookie` header value sets, with its attributes (RFC 6265 §5.2, leniently):
    /// `Max-Age` wins over `Expires` and is counted from `received`.
    static func responseCookie(_ header: String, received: Date) -> HARCookie? {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let first = parts.popFirst() else { return nil }
        let pair = first.trimmingHTTPWhitespace()
        guard !pair.isEmpty else { return nil }
        var cookie: HARCookie
        if let equals = pair.firstIndex(of: "=") {
            cookie = HARCookie(name: String(pair[..<equals]).trimmingHTTPWhitespace(),
                               value: String(pair[pair.index(after: equals)...]).trimmingHTTPWhitespace())
        } else {
            cookie = HARCookie(name: "", value: pair)
        }
        var maxAgeExpiry: Date?
        for attribute in parts {
            let (name, value) = splitAttribute(attribute)
            switch name.lowercased() {
            case "path": cookie.path = value
            case "domain": cookie.domain = value
            case "expires": cookie.expires = HTTPDateParser.parse(value) ?? cookie.expires
            case "max-age":
                if let seconds = Int64(value) {
                    maxAgeExpiry = received.addingTimeInterval(TimeInterval(max(seconds, 0)))
                }
            case "httponly": cookie.httpOnly = true
            case "secure": cookie.secure = true
            case "samesite": cookie.sameSite = value
            default: continue
            }
        }
        if let maxAgeExpiry { cookie.expires = maxAgeExpiry }
        return cookie
    }

    private static func splitAttribute(_ attribute: Substring) -> (String, String) {
        guard let equals = attribute.firstIndex(of: "=") else {
            return (attribute.trimmingHTTPWhitespace(), "")
        }
        return (attribute[..<equals].trimmingHTTPWhitespace(),
                attribute[attribute.index(after: equals)...].trimmingHTTPWhitespace())
    }
}

/// Reads the dates of cookie `Expires` attributes: IMF-fixdate (`Wed, 21 Oct 2026 07:28:00 GMT`),
/// RFC 850 (`Wednesday, 21-Oct-26 07:28:00 GMT`) and asctime, in the tolerant way of RFC 6265
/// §5.1.1 (tokens in any order). Always UTC.
enum HTTPDateParser {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let tokens = text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == ":") })
        for token in tokens {
            if time == nil, token.contains(":") {
                let fields = token.split(separator: ":").compactMap { Int($0) }
                if fields.count == 3 { time = (fields[0], fields[1], fields[2]); continue }
            }
            if let number = Int(token) {
                if day == nil, token.count <= 2 { day = number; continue }
                if year == nil, token.count == 2 || token.count == 4 { year = number; continue }
                continue
            }
            if month == nil, token.count >= 3, let index = months.firstIndex(of: token.prefix(3).lowercased()) {
                month = index + 1
            }
        }
        guard let (hour, minute, second) = time, var year, let month, let day else { return nil }
        if year < 70 { year += 2000 } else if year < 100 { year += 1900 }
        guard (1...31).contains(day), year >= 1601, hour < 24, minute < 60, second < 61 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }
}
