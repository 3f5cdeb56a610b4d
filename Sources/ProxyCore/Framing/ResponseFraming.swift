/// How the proxy reads an origin's response body and frames it towards the client (RFC 9112
/// §6.3), decided from the response head its parser read.
///
/// The client gets exactly one framing header the proxy writes (or, for an HTTP/1.0 client of a
/// body without a length, none and a close): never the origin's `Transfer-Encoding` or a second
/// `Content-Length`. Transfer codings other than `chunked` alone are refused (502), as nginx does:
/// a client told `chunked` would get bytes still coded with something it was never told about.
public enum ResponseFraming {
    public struct Decision: Hashable, Sendable {
        /// How the origin's body ends.
        public var framing: BodyFraming
        /// For a response without a body (HEAD, 304): the origin's valid Content-Length, kept as
        /// metadata (what a GET would have returned).
        public var advertisedLength: Int64?
        /// The origin's framing headers can be forwarded as they are.
        public var isCanonical: Bool

        public init(framing: BodyFraming, advertisedLength: Int64?, isCanonical: Bool) {
            self.framing = framing
            self.advertisedLength = advertisedLength
            self.isCanonical = isCanonical
        }
    }

    /// - Parameters:
    ///   - status: the response status code (final responses only; 1xx are never framed).
    ///   - isHeadRequest: the request was HEAD, so no body follows whatever the headers say.
    public static func decide<Fields: Sequence>(_ fields: Fields, status: Int, isHeadRequest: Bool)
        -> Result<Decision, FramingRefusal> where Fields.Element == (name: String, value: String) {
        decide(FramingFields(fields), status: status, isHeadRequest: isHeadRequest)
    }

    /// The decision from the fields' framing, found by the caller (`ExchangeStateMachine`'s
    /// inlinable entry points).
    static func decide(_ found: FramingFields, status: Int, isHeadRequest: Bool) -> Result<Decision, FramingRefusal> {
        if isHeadRequest || status == 304 || status == 204 || status < 200 {
            let keepsLength = (isHeadRequest || status == 304) && !found.hasTransferEncoding
            let advertised = keepsLength ? found.contentLength : nil
            let canonical = !found.hasTransferEncoding && (!found.hasContentLength || (advertised != nil && found.isCanonical))
            return .success(Decision(framing: .none, advertisedLength: advertised, isCanonical: canonical))
        }
        if found.hasTransferEncoding {
            guard found.isChunkedOnly else {
                return .failure(FramingRefusal(
                    statusCode: 502,
                    reason: "the origin used transfer coding '\(found.codingsText)', which ProxyApp does not relay"))
            }
            // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3); the length is dropped.
            return .success(Decision(framing: .chunked, advertisedLength: nil, isCanonical: found.isCanonical))
        }
        if found.hasContentLength {
            guard let length = found.contentLength else {
                return .failure(found.invalidLength(status: 502, sender: "the origin"))
            }
            return .success(Decision(framing: .contentLength(length), advertisedLength: nil, isCanonical: found.isCanonical))
        }
        return .success(Decision(framing: .untilClose, advertisedLength: nil, isCanonical: true))
    }
}
