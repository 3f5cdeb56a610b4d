import NIOHTTP1
import XCTest
@testable import ProxyEngine

/// The built-in pages' decisions without a socket: which host is the proxy's own, which methods
/// are answered, and that nothing is cacheable.
final class BuiltInPagesTests: XCTestCase {
    func testReservedHostSpellings() {
        for host in ["proxyapp.cert", "PROXYAPP.CERT", "ProxyApp.Cert.", "proxyapp.cert."] {
            XCTAssertTrue(BuiltInPages.isReservedHost(host), host)
        }
        for host in ["proxyapp.cert..", "xproxyapp.cert", "proxyapp.cert.example", "proxyapp.certx", "proxyapp",
                     "[proxyapp.cert]", ""] {
            XCTAssertFalse(BuiltInPages.isReservedHost(host), host)
        }
    }

    func testOnlyGetAndHeadAreAnswered() {
        for method: HTTPMethod in [.POST, .PUT, .DELETE, .OPTIONS, .PATCH, .TRACE, .CONNECT, .RAW(value: "PURGE")] {
            let page = BuiltInPages.page(for: "/", method: method, rootCertificate: nil)
            XCTAssertEqual(page.status, .methodNotAllowed, method.rawValue)
            XCTAssertTrue(page.extraHeaders.contains { $0 == ("Allow", "GET, HEAD") }, method.rawValue)
        }
        XCTAssertEqual(BuiltInPages.page(for: "/", method: .GET, rootCertificate: nil).status, .ok)
        XCTAssertEqual(BuiltInPages.page(for: "/", method: .HEAD, rootCertificate: nil).status, .ok)
    }

    func testNothingIsCacheable() {
        for (path, method) in [("/", HTTPMethod.GET), ("/missing", .GET), ("/", .POST), ("/ProxyCA.pem", .HEAD)] {
            let page = BuiltInPages.page(for: path, method: method, rootCertificate: nil)
            XCTAssertTrue(page.extraHeaders.contains { $0 == ("Cache-Control", "no-store") }, "\(method) \(path)")
        }
    }
}
