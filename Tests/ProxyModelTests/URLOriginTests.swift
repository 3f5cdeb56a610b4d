import ProxyModel
import XCTest

final class URLOriginTests: XCTestCase {
    func testTheOriginOfAbsoluteURLs() {
        XCTAssertEqual(URLOrigin.of("https://api.example.com:8443/v1?x=1"), "https://api.example.com:8443")
        XCTAssertEqual(URLOrigin.of("http://a.test?q"), "http://a.test")
        XCTAssertEqual(URLOrigin.of("http://[::1]:80/#f"), "http://[::1]:80")
        XCTAssertEqual(URLOrigin.of("http://a.test"), "http://a.test")
        XCTAssertEqual(URLOrigin.of("/path only"), "/path only")
    }
}
