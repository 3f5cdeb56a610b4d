import ProxyModel
import XCTest

/// A client for pinning: the address without the port, and the fingerprint.
final class ClientIdentityTests: XCTestCase {
    func testAddressLosesThePort() {
        XCTAssertEqual(ClientIdentity(connectedFrom: "10.0.0.7:5000", fingerprint: "f").address, "10.0.0.7")
        XCTAssertEqual(ClientIdentity(connectedFrom: "[2001:db8::1]:5000", fingerprint: "f").address, "2001:db8::1")
        XCTAssertEqual(ClientIdentity(connectedFrom: "2001:db8::1", fingerprint: "f").address, "2001:db8::1")
        XCTAssertEqual(ClientIdentity(connectedFrom: "10.0.0.7", fingerprint: "f").address, "10.0.0.7")
        XCTAssertEqual(ClientIdentity(connectedFrom: "", fingerprint: "f").address, "")
        XCTAssertEqual(ClientIdentity(connectedFrom: "[unclosed:1", fingerprint: "f").address, "[unclosed", "no address: text stays text")
    }

    /// Two connections of one client are one identity; another port is no other client.
    func testIdentityIgnoresThePortOnly() {
        let first = ClientIdentity(connectedFrom: "127.0.0.1:40000", fingerprint: "t131513h2_a_b")
        XCTAssertEqual(first, ClientIdentity(connectedFrom: "127.0.0.1:40001", fingerprint: "t131513h2_a_b"))
        XCTAssertNotEqual(first, ClientIdentity(connectedFrom: "127.0.0.2:40000", fingerprint: "t131513h2_a_b"))
        XCTAssertNotEqual(first, ClientIdentity(connectedFrom: "127.0.0.1:40000", fingerprint: "t120000h1_a_b"))
        XCTAssertEqual(first.description, "127.0.0.1 t131513h2_a_b")
    }
}
