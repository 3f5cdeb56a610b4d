import ProxyModel
import XCTest

/// `Flow.url` and `Flow.urlHost`: default ports left out, IPv6 literals bracketed.
final class FlowURLTests: XCTestCase {
    func testURLForms() {
        XCTAssertEqual(Flow(scheme: "http", host: "a.test", port: 80, path: "/p?q=1").url, "http://a.test/p?q=1")
        XCTAssertEqual(Flow(scheme: "http", host: "a.test", port: 8080, path: "/").url, "http://a.test:8080/")
        XCTAssertEqual(Flow(scheme: "https", host: "a.test", port: 80, path: "/").url, "https://a.test:80/")
        XCTAssertEqual(Flow(scheme: "https", host: "::1", port: 443, path: "/x").url, "https://[::1]/x")
        XCTAssertEqual(Flow(scheme: "http", host: "2001:db8::1", port: 8080, path: "/").url, "http://[2001:db8::1]:8080/")
        XCTAssertEqual(Flow(host: "127.0.0.1").urlHost, "127.0.0.1")
        XCTAssertEqual(Flow(host: "fe80::1").urlHost, "[fe80::1]")
    }
}
