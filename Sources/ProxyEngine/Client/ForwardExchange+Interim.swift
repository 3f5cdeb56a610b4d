import NIOCore
import NIOHTTP1
import ProxyCore

/// Interim (1xx) responses and when a request may be sent again: the parts of a forwarded
/// exchange that deal with what comes before the final response.
extension ForwardExchange {
    /// More interim responses than any real origin sends before its final one (102 Processing
    /// floods): past this the origin is cut off with a 502.
    static let maxInterimResponses = 32

    /// Relays a 1xx response (not 101) to a client that understands them (HTTP/1.1), without
    /// hop-by-hop fields; a 100 the proxy already sent itself for a held request body is not
    /// sent twice.
    func relayInterim(_ head: HTTPResponseHead) {
        interimResponses += 1
        guard interimResponses <= Self.maxInterimResponses else {
            fail(.upstreamProtocolError(
                host: key.host, reason: "more than \(Self.maxInterimResponses) interim (1xx) responses"))
            return
        }
        guard clientVersion.major == 1 && clientVersion.minor >= 1,
              !(answeredContinue && head.status.code == 100) else { return }
        var headers = head.headers
        if Self.hasHopByHopHeader(headers) {
            let hop = HopByHopHeaders(connectionValues: headers[canonicalForm: "connection"].map(String.init),
                                      forwardUpgrade: false)
            headers = Self.filtered(headers, keeping: hop, droppingFraming: true)
        }
        headers.remove(name: "content-length")
        headers.remove(name: "transfer-encoding")
        clientSawResponse = true
        client.write(.head(HTTPResponseHead(version: clientVersion, status: head.status, headers: headers)))
        client.flush()
    }

    /// Whether a request that failed on a pooled connection before any response may be sent
    /// again on a new one: only safe methods (RFC 9110 §9.2.1), stricter than "idempotent"
    /// (§9.2.2), so nothing that changes state on the origin ever runs twice.
    static func isRetriable(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .TRACE: return true
        default: return false
        }
    }
}

extension TrailerFields {
    /// `trailers` without the fields a proxy must not pass on; nil when nothing is left.
    static func forwardable(_ trailers: HTTPHeaders) -> HTTPHeaders? {
        var kept = HTTPHeaders()
        for (name, value) in trailers where isForwardable(name) {
            kept.add(name: name, value: value)
        }
        return kept.isEmpty ? nil : kept
    }
}
