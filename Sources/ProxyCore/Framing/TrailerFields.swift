/// Which trailer fields a proxy passes on (RFC 9110 §6.5.1): none that frame the message, route
/// it, authenticate, set cookies, or control caching and content handling, since a recipient
/// that merged them into the header section would act on fields the sender could not vouch for
/// when the head went out (and a `Content-Length` in trailers aborted responses in NIO's encoder).
public enum TrailerFields {
    /// Lower-case names never forwarded as trailers.
    static let forbidden: Set<String> = [
        // framing and connection
        "content-length", "transfer-encoding", "trailer", "te", "connection", "keep-alive", "proxy-connection",
        "upgrade",
        // routing and request modifiers
        "host", "expect", "max-forwards", "range", "if-match", "if-none-match", "if-modified-since",
        "if-unmodified-since", "if-range",
        // authentication and cookies
        "authorization", "proxy-authorization", "www-authenticate", "proxy-authenticate", "set-cookie", "cookie",
        // caching, content handling and response control
        "cache-control", "expires", "pragma", "age", "vary", "date", "location", "retry-after",
        "content-encoding", "content-type", "content-range", "content-location",
    ]

    /// Whether a trailer field called `name` is passed on.
    public static func isForwardable(_ name: String) -> Bool {
        !forbidden.contains(name.asciiLowercased)
    }
}
