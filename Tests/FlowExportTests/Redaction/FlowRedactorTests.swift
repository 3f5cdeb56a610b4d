import Compressors
@testable import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Credentials leave a flow; everything else stays byte for byte.
final class FlowRedactorTests: XCTestCase {
    private func header(_ name: String, _ value: String) -> HeaderField { HeaderField(name: name, value: value) }

    func testCredentialHeaders() {
        let flow = Flow(
            requestHeaders: [header("Authorization", "Bearer abc"), header("proxy-authorization", "Basic eA=="),
                             header("Cookie", "sid=1; theme=dark"), header("X-Api-Key", "k"),
                             header("X-CSRF-Token", "t"), header("Accept", "text/html"), header("Sig", "s"),
                             header("X-Amz-Signature", "s"), header("X-Session-Id", "s"), header("Referer", "http://a/p?key=1&q=2")],
            responseHeaders: [header("Set-Cookie", "sid=secret; Path=/; HttpOnly"), header("Location", "/next?token=t#frag"),
                              header("Content-Type", "text/plain"), header("WWW-Authenticate", "Basic realm=x")])
        let redacted = FlowRedactor.redact(flow)
        XCTAssertEqual(redacted.requestHeaders.map(\.value), [
            "REDACTED", "REDACTED", "sid=REDACTED; theme=REDACTED", "REDACTED", "REDACTED", "text/html", "REDACTED",
            "REDACTED", "REDACTED", "http://a/p?key=REDACTED&q=2"])
        XCTAssertEqual(redacted.responseHeaders.map(\.value), [
            "sid=REDACTED; Path=/; HttpOnly", "/next?token=REDACTED#frag", "text/plain", "REDACTED"])
        XCTAssertEqual(redacted.requestHeaders.map(\.name), flow.requestHeaders.map(\.name))
    }

    /// Chrome's HARs keep HTTP/2 pseudo-headers; OAuth's implicit flow returns the token in the
    /// fragment of a redirect.
    func testPseudoPathAndFragments() {
        let flow = Flow(path: "/v1/me?access_token=s1#state=ok&id_token=s2",
                        requestHeaders: [header(":path", "/v1/me?access_token=s1&x=1"), header(":authority", "api.test")],
                        responseHeaders: [header("Location", "https://app.test/cb#access_token=s3&state=xyz"),
                                          header("location", "https://app.test/page#section")])
        let redacted = FlowRedactor.redact(flow)
        XCTAssertEqual(redacted.path, "/v1/me?access_token=REDACTED#state=ok&id_token=REDACTED")
        XCTAssertEqual(redacted.requestHeaders.map(\.value), ["/v1/me?access_token=REDACTED&x=1", "api.test"])
        XCTAssertEqual(redacted.responseHeaders.map(\.value), [
            "https://app.test/cb#access_token=REDACTED&state=xyz", "https://app.test/page#section"])
    }

    func testCookiesFoldedOnSeparateLines() {
        let flow = Flow(requestHeaders: [header("Cookie", "a=s1\nb=s2; c=s3")],
                        responseHeaders: [header("Set-Cookie", "sid=s4; Path=/\nremember=s5; HttpOnly\r\nlast=s6")])
        let redacted = FlowRedactor.redact(flow)
        XCTAssertEqual(redacted.requestHeaders.first?.value, "a=REDACTED; b=REDACTED; c=REDACTED")
        XCTAssertEqual(redacted.responseHeaders.first?.value,
                       "sid=REDACTED; Path=/\nremember=REDACTED; HttpOnly\nlast=REDACTED")
    }

    func testURLsInOtherHeaders() {
        let flow = Flow(responseHeaders: [
            header("Refresh", "0; url=https://a.test/go?token=s1&n=1"), header("Refresh", "5;URL='/next?code=s2'"),
            header("Content-Location", "/doc?signature=s3"),
            header("Link", "<https://cdn.test/a.css?sig=s4>; rel=preload, </b?page=2>; rel=next, <https://x.test/#jwt=s5>; rel=x"),
            header("X-Original-URL", "/admin?api_key=s6"), header("Refresh", "30"), header("Link", "broken <no end"),
        ])
        XCTAssertEqual(FlowRedactor.redact(flow).responseHeaders.map(\.value), [
            "0; url=https://a.test/go?token=REDACTED&n=1", "5;URL='/next?code=REDACTED'", "/doc?signature=REDACTED",
            "<https://cdn.test/a.css?sig=REDACTED>; rel=preload, </b?page=2>; rel=next, <https://x.test/#jwt=REDACTED>; rel=x",
            "/admin?api_key=REDACTED", "30", "broken <no end",
        ])
    }

    func testQueryParametersInThePath() {
        let flow = Flow(path: "/cb?code=1&client_secret=s&PASSWD=p&sig=x&signed=ok&auth%5Ftoken=t&plain&country_code=fr")
        XCTAssertEqual(FlowRedactor.redact(flow).path,
                       "/cb?code=REDACTED&client_secret=REDACTED&PASSWD=REDACTED&sig=REDACTED&signed=ok&auth%5Ftoken=REDACTED&plain&country_code=fr")
        let clean = Flow(path: "/search?q=swift")
        XCTAssertEqual(FlowRedactor.redact(clean), clean)
    }

    func testFormFieldsAreRedactedAndSizesFollow() {
        let body = "user=ann&password=hunter2&api_key=k1"
        let flow = Flow(method: "POST", requestHeaders: [header("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
                                                         header("Content-Length", "\(body.utf8.count)")],
                        requestBody: CapturedBody(bytes: Data(body.utf8), size: Int64(body.utf8.count)))
        let redacted = FlowRedactor.redact(flow)
        let expected = "user=ann&password=REDACTED&api_key=REDACTED"
        XCTAssertEqual(String(decoding: redacted.requestBody.bytes, as: UTF8.self), expected)
        XCTAssertEqual(redacted.requestBody.size, Int64(expected.utf8.count))
        XCTAssertEqual(redacted.requestHeaders.first(named: "Content-Length"), "\(expected.utf8.count)")
    }

    func testGzippedFormBodyIsDecodedThenRedacted() {
        let body = Array("token=abc&x=1".utf8)
        let flow = Flow(method: "POST", requestHeaders: [header("Content-Type", "application/x-www-form-urlencoded"),
                                                         header("Content-Encoding", "gzip")],
                        requestBody: CapturedBody(bytes: Data(Compressors.gzip(body)), size: 40))
        let redacted = FlowRedactor.redact(flow)
        XCTAssertEqual(String(decoding: redacted.requestBody.bytes, as: UTF8.self), "token=REDACTED&x=1")
        XCTAssertNil(redacted.requestHeaders.first(named: "Content-Encoding"))
    }

    func testOtherBodiesAreLeftAlone() {
        let json = Data(#"{"password":"p"}"#.utf8)
        let flow = Flow(method: "POST", requestHeaders: [header("Content-Type", "application/json")],
                        requestBody: CapturedBody(bytes: json, size: Int64(json.count)),
                        responseHeaders: [header("Content-Type", "application/x-www-form-urlencoded")],
                        responseBody: CapturedBody(bytes: Data("token=t".utf8), size: 7))
        XCTAssertEqual(FlowRedactor.redact(flow), flow)
    }

    func testSecretNames() {
        for name in ["token", "X-Auth", "apikey", "Secret", "password", "passwd", "SESSIONID", "credentials", "sig", "signature",
                     "pass", "user[pass]", "PWD", "code", "Code", "jwt", "X-JWT", "otp", "otp_code", "X-Amz-Sig"] {
            XCTAssertTrue(SecretName.matches(name), name)
        }
        for name in ["Accept", "Content-Type", "q", "page", "signal", "design", "host", "passenger", "bypass", "country_code",
                     "status-code", "codec", "jwtish"] {
            XCTAssertFalse(SecretName.matches(name), name)
        }
    }
}
