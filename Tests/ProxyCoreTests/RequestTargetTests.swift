import ProxyCore
import XCTest

/// Request-target classification: the decision every request starts with.
final class RequestTargetTests: XCTestCase {
    private func parse(_ uri: String, method: String = "GET") throws -> RequestTarget {
        try RequestTarget.parse(method: method, uri: uri)
    }

    private func reason(_ uri: String, method: String = "GET") -> String? {
        do {
            _ = try RequestTarget.parse(method: method, uri: uri)
            return nil
        } catch {
            return error.description
        }
    }

    /// Absolute-form URLs give scheme, lowercased host, port (defaulted) and path with query.
    func testAbsoluteForm() throws {
        XCTAssertEqual(try parse("http://Example.TEST/a/b?q=1&r=2"),
                       .absolute(scheme: "http", host: "example.test", port: 80, pathAndQuery: "/a/b?q=1&r=2"))
        XCTAssertEqual(try parse("HTTP://example.test:8080"),
                       .absolute(scheme: "http", host: "example.test", port: 8080, pathAndQuery: "/"))
        XCTAssertEqual(try parse("http://example.test?x=1"),
                       .absolute(scheme: "http", host: "example.test", port: 80, pathAndQuery: "/?x=1"))
        XCTAssertEqual(try parse("https://example.test/"),
                       .absolute(scheme: "https", host: "example.test", port: 443, pathAndQuery: "/"))
    }

    /// IPv6 literals keep their address without brackets; userinfo and fragments are dropped.
    func testIPv6UserinfoAndFragment() throws {
        XCTAssertEqual(try parse("http://[::1]:8080/x"),
                       .absolute(scheme: "http", host: "::1", port: 8080, pathAndQuery: "/x"))
        XCTAssertEqual(try parse("http://[2001:DB8::1]/"),
                       .absolute(scheme: "http", host: "2001:db8::1", port: 80, pathAndQuery: "/"))
        XCTAssertEqual(try parse("http://user:pw@example.test/p#frag"),
                       .absolute(scheme: "http", host: "example.test", port: 80, pathAndQuery: "/p"))
    }

    /// CONNECT takes authority-form and requires a port.
    func testAuthorityForm() throws {
        XCTAssertEqual(try parse("example.test:443", method: "CONNECT"), .authority(host: "example.test", port: 443))
        XCTAssertEqual(try parse("[::1]:22", method: "CONNECT"), .authority(host: "::1", port: 22))
        XCTAssertEqual(reason("example.test", method: "CONNECT"), "CONNECT target 'example.test' needs a port (host:port)")
    }

    /// Requests for the proxy itself.
    func testOriginForm() throws {
        XCTAssertEqual(try parse("/"), .origin(pathAndQuery: "/"))
        XCTAssertEqual(try parse("/ProxyCA.cer?x"), .origin(pathAndQuery: "/ProxyCA.cer?x"))
        XCTAssertEqual(try parse("*", method: "OPTIONS"), .origin(pathAndQuery: "*"))
    }

    /// Every unusable target is an error with a reason a person can act on.
    func testInvalidTargets() {
        XCTAssertEqual(reason("ftp://example.test/"), "unsupported URL scheme 'ftp'")
        XCTAssertEqual(reason("example.test/x"), "request target 'example.test/x' is neither an absolute URL nor a path")
        XCTAssertEqual(reason("http://:80/"), "missing host in ':80'")
        XCTAssertEqual(reason("http://example.test:0/"), "invalid port '0'")
        XCTAssertEqual(reason("http://example.test:65536/"), "invalid port '65536'")
        XCTAssertEqual(reason("http://example.test:abc/"), "invalid port 'abc'")
        XCTAssertEqual(reason("http://[::1/"), "unterminated IPv6 literal in '[::1'")
        XCTAssertEqual(reason("http://[::1]x/"), "unexpected text after IPv6 literal in '[::1]x'")
        XCTAssertEqual(reason("http://exa mple.test/"), "invalid host 'exa mple.test'")
    }

    /// No input crashes the parser (a cheap fuzz over random ASCII and bytes-as-text).
    func testRandomInputNeverCrashes() {
        var random = RandomText("htps:/[]@?#%:0123456789abcdefABC.-_ \t*")
        for _ in 0..<5000 {
            let uri = random.next(lengths: 0...40)
            for method in ["GET", "CONNECT"] {
                if case .authority(_, let port)? = try? RequestTarget.parse(method: method, uri: uri) {
                    XCTAssertTrue((1...65535).contains(port))
                }
            }
        }
    }
}
