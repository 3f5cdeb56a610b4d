import ProxyCore
import XCTest

/// Which logins bind an upstream connection to one client.
final class ConnectionBoundAuthTests: XCTestCase {
    func testNTLMAndNegotiateBindInAnyCaseAndPosition() {
        XCTAssertTrue(ConnectionBoundAuth.binds(authorization: ["NTLM TlRMTVNTUAAB"], wwwAuthenticate: []))
        XCTAssertTrue(ConnectionBoundAuth.binds(authorization: ["negotiate YIIG"], wwwAuthenticate: []))
        XCTAssertTrue(ConnectionBoundAuth.binds(authorization: [], wwwAuthenticate: ["NTLM"]))
        XCTAssertTrue(ConnectionBoundAuth.binds(authorization: [], wwwAuthenticate: ["Basic realm=\"x\", Negotiate"]))
        XCTAssertTrue(ConnectionBoundAuth.binds(authorization: [], wwwAuthenticate: ["Basic realm=x", "ntlm"]))
    }

    func testOtherSchemesDoNotBind() {
        XCTAssertFalse(ConnectionBoundAuth.binds(authorization: ["Basic dTpw", "Bearer NTLM"], wwwAuthenticate: []))
        XCTAssertFalse(ConnectionBoundAuth.binds(authorization: [], wwwAuthenticate: ["Bearer realm=\"NTLM\""]))
        XCTAssertFalse(ConnectionBoundAuth.binds(authorization: ["NTLMX abc"], wwwAuthenticate: ["Negotiated"]))
    }
}
