/// How the proxy frames a request it forwards, decided from the header fields its parser read
/// (RFC 9112 §6, the way nginx and HAProxy do it).
///
/// The upstream request carries exactly one framing header the proxy writes itself, never the
/// client's: `Content-Length: N`, or `Transfer-Encoding: chunked`, or none for a request without
/// a body (`Content-Length: 0` for methods whose body has a meaning: POST, PUT, PATCH). What cannot be
/// framed unambiguously is refused before anything reaches the origin, rules or capture.
public enum RequestFraming {
    /// The framing to forward and whether the client's framing headers can be forwarded as they
    /// are (exactly the one header the proxy would write, spelled the same way).
    public struct Decision: Hashable, Sendable {
        public var framing: BodyFraming
        public var isCanonical: Bool

        public init(framing: BodyFraming, isCanonical: Bool) {
            self.framing = framing
            self.isCanonical = isCanonical
        }
    }

    /// - Parameters:
    ///   - fields: the request's header fields as parsed.
    ///   - method: the request method (upper case, as parsed).
    ///   - isHTTP10: the request line said HTTP/1.0 (or older).
    public static func decide<Fields: Sequence>(_ fields: Fields, method: String, isHTTP10: Bool)
        -> Result<Decision, FramingRefusal> where Fields.Element == (name: String, value: String) {
        decide(FramingFields(fields), method: method, isHTTP10: isHTTP10)
    }

    /// The decision from the fields' framing, found by the caller (`ExchangeStateMachine`'s
    /// inlinable entry points).
    static func decide(_ found: FramingFields, method: String, isHTTP10: Bool) -> Result<Decision, FramingRefusal> {
        if found.hasTransferEncoding {
            if isHTTP10 {
                return .failure(FramingRefusal(
                    statusCode: 400, reason: "Transfer-Encoding is not allowed in an HTTP/1.0 request"))
            }
            if found.hasContentLength {
                return .failure(FramingRefusal(
                    statusCode: 400, reason: "the request has both Content-Length and Transfer-Encoding"))
            }
            guard found.isChunkedOnly else {
                return .failure(FramingRefusal(
                    statusCode: 501,
                    reason: "transfer coding '\(found.codingsText)' is not supported: send the body with "
                        + "'Transfer-Encoding: chunked' alone or with a Content-Length"))
            }
            return .success(Decision(framing: .chunked, isCanonical: found.isCanonical))
        }
        if found.hasContentLength {
            guard let length = found.contentLength else {
                return .failure(found.invalidLength(status: 400, sender: "the request"))
            }
            return .success(Decision(framing: .contentLength(length), isCanonical: found.isCanonical))
        }
        if bodyHasMeaning(method) {
            return .success(Decision(framing: .contentLength(0), isCanonical: false))
        }
        return .success(Decision(framing: .none, isCanonical: true))
    }

    /// Methods whose request body has a defined meaning, so a request without one says so with
    /// `Content-Length: 0` (RFC 9110 §8.6; some origins answer 411 otherwise).
    static func bodyHasMeaning(_ method: String) -> Bool {
        switch method {
        case "POST", "PUT", "PATCH": return true
        default: return false
        }
    }
}
