import ProxyCore
import XCTest

/// Failures map to the right status code, a one-line reason and an RFC 9209 Proxy-Status.
final class ProxyFailureTests: XCTestCase {
    func testStatusCodesAndMessages() {
        let cases: [(ProxyFailure, Int, String)] = [
            (.dnsFailure(host: "a.test", reason: "Name or service not known"), 502,
             "cannot resolve host 'a.test': Name or service not known"),
            (.dnsTimeout(host: "a.test", milliseconds: 5000), 504, "no DNS answer for host 'a.test' within 5s"),
            (.dnsTimeout(host: "a.test", milliseconds: 250), 504, "no DNS answer for host 'a.test' within 250ms"),
            (.connectionRefused(host: "::1", port: 81), 502, "connection refused by [::1]:81"),
            (.connectFailed(host: "a.test", port: 80, reason: "Network is unreachable"), 502,
             "cannot connect to a.test:80: Network is unreachable"),
            (.connectTimeout(host: "a.test", port: 80, seconds: 10), 504, "timed out after 10s connecting to a.test:80"),
            (.upstreamTimeout(host: "a.test", port: 80, seconds: 60), 504, "a.test:80 sent nothing for 60s"),
            (.upstreamClosed(host: "a.test", port: 80), 502, "a.test:80 closed the connection before a complete response"),
            (.upstreamProtocolError(host: "a.test", reason: "invalid status"), 502, "invalid response from 'a.test': invalid status"),
            (.upstreamCertificateInvalid(host: "a.test", port: 443, reason: "certificate has expired"), 502,
             "the certificate of a.test:443 is not trusted: certificate has expired"),
            (.upstreamTLSFailed(host: "a.test", port: 443, reason: "protocol version"), 502,
             "TLS handshake with a.test:443 failed: protocol version"),
            (.badRequest(reason: "nope"), 400, "bad request: nope"),
            (.headersTooLarge(limit: 65536), 431, "request header section is larger than 64 KiB"),
            (.notImplemented(reason: "later"), 501, "later"),
        ]
        for (failure, status, message) in cases {
            XCTAssertEqual(failure.statusCode, status, "\(failure)")
            XCTAssertEqual(failure.message, message)
            XCTAssertFalse(failure.message.contains("\n"))
        }
    }

    /// The Proxy-Status value is a valid structured-field string even with quotes in the reason.
    func testProxyStatusHeaderEscapes() {
        let failure = ProxyFailure.badRequest(reason: #"bad "quote" and \ slash"#)
        XCTAssertEqual(failure.proxyStatusHeader,
                       #"ProxyApp; error=http_request_error; details="bad request: bad \"quote\" and \\ slash""#)
        XCTAssertEqual(ProxyFailure.dnsFailure(host: "x", reason: "y").proxyStatusError, "dns_error")
        XCTAssertEqual(ProxyFailure.connectTimeout(host: "x", port: 1, seconds: 1).proxyStatusError, "connection_timeout")
        XCTAssertEqual(ProxyFailure.dnsTimeout(host: "x", milliseconds: 1).proxyStatusError, "dns_timeout")
        XCTAssertEqual(ProxyFailure.upstreamCertificateInvalid(host: "x", port: 1, reason: "r").proxyStatusError,
                       "tls_certificate_error")
        XCTAssertEqual(ProxyFailure.upstreamTLSFailed(host: "x", port: 1, reason: "r").proxyStatusError, "tls_protocol_error")
    }

    /// Details from an origin (a certificate's names) cannot break out of the header: CR, LF,
    /// other controls and non-ASCII become `?`.
    func testProxyStatusHeaderIsPrintableASCII() {
        let header = ProxyFailure.proxyStatusHeader(error: "tls_certificate_error",
                                                    details: "for evil\r\nSet-Cookie: a=b\u{0}\u{7F}\u{85}\u{202E}é")
        XCTAssertEqual(header, #"ProxyApp; error=tls_certificate_error; details="for evil??Set-Cookie: a=b?????""#)
    }
}
