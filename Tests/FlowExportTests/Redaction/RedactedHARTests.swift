import FlowExport
import Foundation
import ProxyModel
import XCTest

/// End to end: a HAR exported with redaction holds none of a flow's secrets anywhere in the
/// document (URL, headers, cookies lists, query and form params, redirect target).
final class RedactedHARTests: XCTestCase {
    private func header(_ name: String, _ value: String) -> HeaderField { HeaderField(name: name, value: value) }

    private var flowWithSecrets: Flow {
        let body = Array("user=ann&pass=SECRET-PASS&otp=SECRET-OTP&pwd=SECRET-FORMPWD".utf8)
        return Flow(startedAt: SampleFlows.started, method: "POST", scheme: "https", host: "api.test", port: 443,
                    path: "/v1/me?access_token=SECRET-QUERY&code=SECRET-QCODE#id_token=SECRET-FRAGMENT",
                    httpVersion: "HTTP/2.0",
                    requestHeaders: [
                        header(":path", "/v1/me?access_token=SECRET-PSEUDO"), header(":authority", "api.test"),
                        header("Cookie", "a=SECRET-COOKIE1\nb=SECRET-COOKIE2"), header("Authorization", "Bearer SECRET-AUTH"),
                        header("Referer", "https://r.test/?pwd=SECRET-PWD"), header("X-JWT", "SECRET-JWTHEADER"),
                        header("Content-Type", "application/x-www-form-urlencoded"),
                    ],
                    requestBody: SampleFlows.body(body), status: 302, reason: "Found",
                    responseHeaders: [
                        header("Location", "https://app.test/cb#access_token=SECRET-LOCATION&state=s"),
                        header("Set-Cookie", "sid=SECRET-SETCOOKIE1; Path=/\nremember=SECRET-SETCOOKIE2; HttpOnly"),
                        header("Refresh", "0; url=/x?code=SECRET-REFRESH"), header("Content-Location", "/c?jwt=SECRET-CONTENTLOC"),
                        header("Link", "<https://x.test/a?signature=SECRET-LINK>; rel=next"),
                    ])
    }

    func testNoSecretSurvivesAnywhereInTheDocument() throws {
        let secrets = ["PASS", "OTP", "FORMPWD", "QUERY", "QCODE", "FRAGMENT", "PSEUDO", "COOKIE1", "COOKIE2", "AUTH", "PWD",
                       "JWTHEADER", "LOCATION", "SETCOOKIE1", "SETCOOKIE2", "REFRESH", "CONTENTLOC", "LINK"].map { "SECRET-" + $0 }
        let plain = try exportHAR([flowWithSecrets], redaction: false)
        for secret in secrets {
            XCTAssertNotNil(plain.range(of: Data(secret.utf8)), "the unredacted export holds \(secret): the test sees it")
        }
        let redacted = try exportHAR([flowWithSecrets], redaction: true)
        XCTAssertNil(redacted.range(of: Data("SECRET".utf8)), String(decoding: redacted, as: UTF8.self))
        let entry = try XCTUnwrap(harEntries(redacted).first)
        let response = try XCTUnwrap(entry["response"] as? [String: Any])
        XCTAssertEqual(response["redirectURL"] as? String, "https://app.test/cb#access_token=REDACTED&state=s")
        XCTAssertEqual((response["cookies"] as? [[String: Any]])?.map { $0["name"] as? String }, ["sid", "remember"])
    }
}
