import NIOHTTP1
import XCTest
@testable import ProxyEngine

/// What a decrypted client is offered back in ALPN (the client's order decides), and how an
/// HTTP/2 client's split cookies are joined for an HTTP/1.1 origin.
final class ApplicationProtocolChoiceTests: XCTestCase {
    func testTheClientsOrderDecides() {
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["h2", "http/1.1"], http2: true), ["h2", "http/1.1"])
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["http/1.1", "h2"], http2: true), ["http/1.1", "h2"])
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["h2"], http2: true), ["h2"])
    }

    func testProtocolsTheProxyDoesNotSpeakAreLeftOut() {
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["h3", "spdy/3", "h2", "http/1.0"], http2: true), ["h2"])
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["acme-tls/1"], http2: true), ["http/1.1"])
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: [], http2: true), ["http/1.1"])
    }

    func testWithoutHTTP2OnlyHTTP1IsAgreed() {
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["h2", "http/1.1"], http2: false), ["http/1.1"])
        XCTAssertEqual(TLSInterception.applicationProtocols(offered: ["h2"], http2: false), ["http/1.1"])
    }

    func testSplitCookiesAreJoinedInOrderAndOtherFieldsKept() {
        let headers = HTTPHeaders([("host", "a.test"), ("cookie", "a=1"), ("accept", "*/*"), ("cookie", "b=2, c=3")])
        let joined = ExchangeDriver.joiningCookies(headers)
        XCTAssertEqual(joined["cookie"], ["a=1; b=2, c=3"], "one field; a comma inside a cookie is not a separator")
        XCTAssertEqual(joined["host"], ["a.test"])
        XCTAssertEqual(joined["accept"], ["*/*"])
        let single = HTTPHeaders([("cookie", "a=1")])
        XCTAssertEqual(ExchangeDriver.joiningCookies(single)["cookie"], ["a=1"])
    }
}
