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

    func testQueryParametersInThePath() {
        let flow = Flow(path: "/cb?code=1&client_secret=s&PASSWD=p&sig=x&signed=ok&auth%5Ftoken=t&plain")
        XCTAssertEqual(FlowRedactor.redact(flow).path,
                       "/cb?code=1&client_secret=REDACTED&PASSWD=REDACTED&sig=REDACTED&signed=ok&auth%5Ftoken=REDACTED&plain")
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
        for name in ["token", "X-Auth", "apikey", "Secret", "password", "passwd", "SESSIONID", "credentials", "sig", "signature"] {
            XCTAssertTrue(SecretName.matches(name), name)
        }
        for name in ["Accept", "Content-Type", "q", "page", "signal", "design", "host"] {
            XCTAssertFalse(SecretName.matches(name), name)
        }
    }
}
