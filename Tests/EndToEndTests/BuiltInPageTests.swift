import Foundation
import XCTest

/// Requests addressed to the proxy itself (origin-form, `GET / HTTP/1.1` to its port) are
/// answered by the proxy's own pages and never forwarded.
final class BuiltInPageTests: XCTestCase {
    /// `/` is an HTML page saying the proxy runs and how to use it.
    func testRootServesHTMLPage() async throws {
        try await Fixture.run { proxy, origin in
            let result = try await Curl.run(["-i", "http://127.0.0.1:\(proxy.port)/"])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            guard let (response, _) = try RawResponse.parse(result.stdout, atEOF: true) else {
                return XCTFail("no response: \(result.stdoutText)")
            }
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(response.header("Content-Type")?.hasPrefix("text/html") == true)
            XCTAssertTrue(response.bodyText.contains("ProxyApp is running"), response.bodyText)
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// `/index.html` is the same page.
    func testIndexHTMLServesSamePage() async throws {
        try await Fixture.run { proxy, _ in
            let root = try await Curl.run(["http://127.0.0.1:\(proxy.port)/"])
            let index = try await Curl.run(["http://127.0.0.1:\(proxy.port)/index.html"])
            XCTAssertEqual(index.exitCode, 0, index.summary)
            XCTAssertFalse(index.stdout.isEmpty)
            XCTAssertEqual(index.stdout, root.stdout)
        }
    }

    /// `/proxy.pac` points a device set to automatic configuration at the address it used,
    /// asked directly or through the proxy, and needs no login even with `--auth`.
    func testProxyAutoConfigNamesTheAddressUsed() async throws {
        try await Fixture.run({ $0.access.credentials.add(user: "phone", password: "pw") }) { proxy, origin in
            for arguments in [["http://127.0.0.1:\(proxy.port)/proxy.pac"],
                              ["-x", "http://127.0.0.1:\(proxy.port)", "http://proxyapp.cert/proxy.pac"]] {
                let result = try await Curl.run(["-w", "\n%{http_code} %{content_type}"] + arguments)
                XCTAssertTrue(result.stdoutText.contains("return \"PROXY 127.0.0.1:\(proxy.port)\";"), result.stdoutText)
                XCTAssertTrue(result.stdoutText.hasSuffix("\n200 application/x-ns-proxy-autoconfig"), result.stdoutText)
            }
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// Any other path is a 404 naming the path.
    func testUnknownPathIs404() async throws {
        try await Fixture.run { proxy, _ in
            let result = try await Curl.run(["-w", "\n%{http_code}", "http://127.0.0.1:\(proxy.port)/no/such/page?x=1"])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let lines = result.stdoutText.split(separator: "\n")
            XCTAssertEqual(lines.last, "404")
            XCTAssertTrue(result.stdoutText.contains("/no/such/page"), result.stdoutText)
        }
    }

    /// Built-in pages keep the connection open for the next request.
    func testBuiltInPagesKeepConnectionOpen() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n")
            let page = try client.readResponse()
            XCTAssertEqual(page.status, 200)
            XCTAssertNotEqual(page.header("Connection")?.lowercased(), "close")
            // The same connection then works as a proxy connection.
            try client.send("GET \(origin.url("/bytes/9")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let forwarded = try client.readResponse()
            XCTAssertEqual(forwarded.status, 200)
            XCTAssertEqual(forwarded.body, PatternBytes.data(count: 9))
        }
    }
}
