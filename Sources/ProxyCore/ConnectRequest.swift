import ProxyModel

/// What a CONNECT request may carry besides its target.
///
/// A CONNECT has no content (RFC 9110 §9.3.6), and NIO's decoder treats every byte after its
/// head as tunnel data whatever `Content-Length` or `Transfer-Encoding` say. So a CONNECT that
/// declares a body would push that body into the tunnel, where the origin reads it as the start
/// of its protocol: refuse it instead. `Content-Length: 0` declares no body and is let through
/// (some HTTP libraries send it on every request).
public enum ConnectRequest {
    /// The one-line reason to refuse a CONNECT with these header fields, or nil when it may go on.
    public static func bodyRefusal(_ headers: some Sequence<(name: String, value: String)>) -> String? {
        for (name, value) in headers {
            if name.equalsIgnoringASCIICase("transfer-encoding") {
                return "a CONNECT request has no body: remove Transfer-Encoding"
            }
            if name.equalsIgnoringASCIICase("content-length"), !value.utf8.elementsEqual("0".utf8) {
                return "a CONNECT request has no body: remove Content-Length"
            }
        }
        return nil
    }
}
