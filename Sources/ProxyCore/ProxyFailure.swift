import Foundation

/// Every way an exchange can fail, with the status code and the one-line reason the client is
/// answered with.
///
/// Failures are answers, never hangs: the engine maps whatever went wrong to one of these, sends
/// `statusCode` with `message` as a plain-text body, and records `message` on the flow.
public enum ProxyFailure: Error, Sendable, Hashable {
    /// The upstream host name did not resolve.
    case dnsFailure(host: String, reason: String)
    /// The resolver gave no answer for the host within the lookup timeout (milliseconds).
    case dnsTimeout(host: String, milliseconds: Int64)
    /// Nobody listens on the upstream port.
    case connectionRefused(host: String, port: Int)
    /// The upstream connection could not be opened for another reason.
    case connectFailed(host: String, port: Int, reason: String)
    /// Opening the upstream connection took longer than the connect timeout.
    case connectTimeout(host: String, port: Int, seconds: Int64)
    /// The origin sent nothing for longer than the upstream timeout.
    case upstreamTimeout(host: String, port: Int, seconds: Int64)
    /// The origin stopped taking the request body (it is not reading) for the timeout.
    case upstreamStalledReading(host: String, port: Int, seconds: Int64)
    /// The client stopped sending its request body for the timeout.
    case requestBodyTimeout(seconds: Int64)
    /// The origin closed the connection before a complete response.
    case upstreamClosed(host: String, port: Int)
    /// The origin's response could not be parsed.
    case upstreamProtocolError(host: String, reason: String)
    /// The origin's TLS certificate failed verification (untrusted, expired, wrong name).
    case upstreamCertificateInvalid(host: String, port: Int, reason: String)
    /// The TLS handshake with the origin failed for a reason other than its certificate.
    case upstreamTLSFailed(host: String, port: Int, reason: String)
    /// The client's request could not be parsed or used.
    case badRequest(reason: String)
    /// The request's header section is larger than the limit.
    case headersTooLarge(limit: Int)
    /// The request asks for something this proxy does not do (yet).
    case notImplemented(reason: String)
    /// An exchange held at a breakpoint was aborted by whoever held it (`side`: "request" or
    /// "response").
    case heldExchangeAborted(side: String)
    /// An exchange held at a breakpoint was not released within the hold timeout.
    case heldExchangeTimedOut(side: String, seconds: Int64)
    /// `--auth` is set and the request's proxy credentials are missing or wrong (407).
    case proxyAuthenticationRequired(reason: String)
    /// The client may not use the proxy from where it connects (`--allow-clients`).
    case clientNotAllowed(reason: String)
    /// A client from another machine asked for this machine's own services (`--allow-internal`).
    case internalDestination(host: String, address: String)
    /// The upstream proxy (`--upstream-proxy`, an `upstream_proxy` rule) could not be reached or
    /// would not open the way on (`proxy`: its URL without the password).
    case upstreamProxyFailed(proxy: String, reason: String)

    public var statusCode: Int {
        switch self {
        case .dnsFailure, .connectionRefused, .connectFailed, .upstreamClosed, .upstreamProtocolError,
             .upstreamCertificateInvalid, .upstreamTLSFailed, .heldExchangeAborted, .upstreamProxyFailed:
            return 502
        case .dnsTimeout, .connectTimeout, .upstreamTimeout, .upstreamStalledReading, .heldExchangeTimedOut:
            return 504
        case .requestBodyTimeout:
            return 408
        case .badRequest:
            return 400
        case .headersTooLarge:
            return 431
        case .notImplemented:
            return 501
        case .proxyAuthenticationRequired:
            return 407
        case .clientNotAllowed, .internalDestination:
            return 403
        }
    }

    /// The error type of RFC 9209's `Proxy-Status` header, so tools can tell failures apart
    /// even where a response carries no body (a refused CONNECT).
    public var proxyStatusError: String {
        switch self {
        case .dnsFailure: return "dns_error"
        case .dnsTimeout: return "dns_timeout"
        case .connectionRefused: return "connection_refused"
        case .connectFailed: return "destination_unavailable"
        case .connectTimeout: return "connection_timeout"
        case .upstreamTimeout, .upstreamStalledReading: return "http_response_timeout"
        case .requestBodyTimeout: return "http_request_error"
        case .upstreamClosed: return "connection_terminated"
        case .upstreamProtocolError: return "http_protocol_error"
        case .upstreamCertificateInvalid: return "tls_certificate_error"
        case .upstreamTLSFailed: return "tls_protocol_error"
        case .badRequest, .headersTooLarge, .notImplemented: return "http_request_error"
        case .heldExchangeAborted: return "http_request_denied"
        case .heldExchangeTimedOut: return "http_response_timeout"
        case .proxyAuthenticationRequired, .clientNotAllowed: return "http_request_denied"
        case .internalDestination: return "destination_ip_prohibited"
        case .upstreamProxyFailed: return "destination_unavailable"
        }
    }

    /// The full `Proxy-Status` header value (RFC 9209) for this failure.
    public var proxyStatusHeader: String {
        Self.proxyStatusHeader(error: proxyStatusError, details: message)
    }

    /// A `Proxy-Status` value (RFC 9209) naming ProxyApp, an error type and details, the details
    /// escaped as a structured-field string (backslashes and quotes). A structured-field string
    /// holds printable ASCII only (RFC 8941 §3.3.3): anything else becomes `?`, so text from an
    /// origin (certificate names) can never end the header line.
    public static func proxyStatusHeader(error: String, details: String) -> String {
        var printable = String.UnicodeScalarView()
        for scalar in details.unicodeScalars {
            printable.append((0x20...0x7E).contains(scalar.value) ? scalar : "?")
        }
        let escaped = String(printable).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "ProxyApp; error=\(error); details=\"\(escaped)\""
    }

    /// The reason, in one line, naming what failed.
    public var message: String {
        switch self {
        case .dnsFailure(let host, let reason):
            return "cannot resolve host '\(host)': \(reason)"
        case .dnsTimeout(let host, let milliseconds):
            return "no DNS answer for host '\(host)' within \(Self.duration(milliseconds))"
        case .connectionRefused(let host, let port):
            return "connection refused by \(Self.endpoint(host, port))"
        case .connectFailed(let host, let port, let reason):
            return "cannot connect to \(Self.endpoint(host, port)): \(reason)"
        case .connectTimeout(let host, let port, let seconds):
            return "timed out after \(seconds)s connecting to \(Self.endpoint(host, port))"
        case .upstreamTimeout(let host, let port, let seconds):
            return "\(Self.endpoint(host, port)) sent nothing for \(seconds)s"
        case .upstreamStalledReading(let host, let port, let seconds):
            return "\(Self.endpoint(host, port)) stopped reading the request body for \(seconds)s"
        case .requestBodyTimeout(let seconds):
            return "the request body stalled for \(seconds)s"
        case .upstreamClosed(let host, let port):
            return "\(Self.endpoint(host, port)) closed the connection before a complete response"
        case .upstreamProtocolError(let host, let reason):
            return "invalid response from '\(host)': \(reason)"
        case .upstreamCertificateInvalid(let host, let port, let reason):
            return "the certificate of \(Self.endpoint(host, port)) is not trusted: \(reason)"
        case .upstreamTLSFailed(let host, let port, let reason):
            return "TLS handshake with \(Self.endpoint(host, port)) failed: \(reason)"
        case .badRequest(let reason):
            return "bad request: \(reason)"
        case .headersTooLarge(let limit):
            return "request header section is larger than \(limit / 1024) KiB"
        case .notImplemented(let reason):
            return reason
        case .heldExchangeAborted(let side):
            return "the \(side) was aborted at a breakpoint"
        case .heldExchangeTimedOut(let side, let seconds):
            return "the \(side) was held at a breakpoint for \(seconds)s and nobody released it"
        case .proxyAuthenticationRequired(let reason):
            return "proxy authentication required: \(reason)"
        case .clientNotAllowed(let reason):
            return reason
        case .internalDestination(let host, let address):
            let named = host == address ? address : "'\(host)' (\(address))"
            return "\(named) is on the proxy's own machine: clients from other machines may not reach it "
                + "(run the proxy with --allow-internal to permit it)"
        case .upstreamProxyFailed(let proxy, let reason):
            return "upstream proxy \(proxy): \(reason)"
        }
    }

    /// `5s`, or `250ms` for a time that is not whole seconds.
    private static func duration(_ milliseconds: Int64) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    private static func endpoint(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
