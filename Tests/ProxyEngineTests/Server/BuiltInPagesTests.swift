import NIOCore
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

    /// `/proxy.pac` names the address the client reached (IPv6 in brackets), with no DIRECT
    /// fallback; without a known address it is a 404 like any missing page.
    func testProxyAutoConfig() throws {
        let v4 = BuiltInPages.page(for: "/proxy.pac?x=1", method: .GET, rootCertificate: nil,
                                   proxyAddress: try SocketAddress(ipAddress: "192.168.1.5", port: 8080))
        XCTAssertEqual(v4.status, .ok)
        XCTAssertEqual(v4.contentType, "application/x-ns-proxy-autoconfig")
        let text = String(decoding: v4.body, as: UTF8.self)
        XCTAssertTrue(text.contains("function FindProxyForURL(url, host)"), text)
        XCTAssertTrue(text.contains("return \"PROXY 192.168.1.5:8080\";"), text)
        XCTAssertFalse(text.contains("DIRECT"), text)
        let v6 = BuiltInPages.page(for: "/proxy.pac", method: .GET, rootCertificate: nil,
                                   proxyAddress: try SocketAddress(ipAddress: "fd00::5", port: 8080))
        XCTAssertTrue(String(decoding: v6.body, as: UTF8.self).contains("\"PROXY [fd00::5]:8080\""))
        XCTAssertEqual(BuiltInPages.page(for: "/proxy.pac", method: .GET, rootCertificate: nil).status, .notFound)
    }
}
