import ProxyCore
import XCTest

/// Who is admitted, who must log in, and which destinations a client from another machine may
/// not reach.
final class ClientAccessPolicyTests: XCTestCase {
    private func address(_ text: String) throws -> IPAddressBytes { try XCTUnwrap(IPAddressBytes(text)) }

    func testLoopbackOnlyByDefault() throws {
        let policy = ClientAccessPolicy()
        XCTAssertEqual(policy.admit(client: try address("127.0.0.1")), .admitted)
        XCTAssertEqual(policy.admit(client: try address("::1")), .admitted)
        XCTAssertEqual(policy.admit(client: nil), .admitted)
        guard case .refused(let reason) = policy.admit(client: try address("192.168.1.9")) else { return XCTFail() }
        XCTAssertTrue(reason.contains("--auth") && reason.contains("--allow-clients"), reason)
        XCTAssertFalse(policy.requiresAuthentication)
    }

    func testAuthAdmitsEveryAddressToLogIn() throws {
        var policy = ClientAccessPolicy()
        policy.credentials.add(user: "u", password: "p")
        XCTAssertTrue(policy.requiresAuthentication)
        XCTAssertEqual(policy.admit(client: try address("192.168.1.9")), .admitted)
        XCTAssertEqual(policy.admit(client: try address("2001:db8::5")), .admitted)
    }

    func testAllowClientsListsTheNetworks() throws {
        var policy = ClientAccessPolicy()
        policy.allowedClients = [try IPNetwork.parse("192.168.1.0/24").get(), try IPNetwork.parse("fd00::/8").get()]
        // With --auth too, the list still applies: both must hold.
        policy.credentials.add(user: "u", password: "p")
        XCTAssertEqual(policy.admit(client: try address("192.168.1.77")), .admitted)
        XCTAssertEqual(policy.admit(client: try address("fd00::9")), .admitted)
        XCTAssertEqual(policy.admit(client: try address("::ffff:192.168.1.77")), .admitted)
        XCTAssertEqual(policy.admit(client: try address("127.0.0.1")), .admitted)
        guard case .refused(let reason) = policy.admit(client: try address("192.168.2.1")) else { return XCTFail() }
        XCTAssertTrue(reason.contains("192.168.2.1") && reason.contains("--allow-clients"), reason)
    }

    func testGuardAppliesToClientsFromElsewhere() throws {
        var policy = ClientAccessPolicy()
        XCTAssertFalse(policy.guardsDestinations(forClient: try address("127.0.0.1")))
        XCTAssertFalse(policy.guardsDestinations(forClient: try address("::ffff:127.0.0.1")))
        XCTAssertFalse(policy.guardsDestinations(forClient: nil))
        XCTAssertTrue(policy.guardsDestinations(forClient: try address("10.0.0.5")))
        policy.allowsInternalDestinations = true
        XCTAssertFalse(policy.guardsDestinations(forClient: try address("10.0.0.5")))
    }

    func testInternalDestinations() throws {
        var policy = ClientAccessPolicy()
        policy.ownAddresses = [try address("192.168.1.5")]
        for text in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "169.254.169.254", "fe80::1", "0.0.0.0", "::",
                     "192.168.1.5"] {
            XCTAssertTrue(policy.isInternal(try address(text)), text)
        }
        for text in ["192.168.1.6", "10.0.0.1", "8.8.8.8", "2001:db8::1"] {
            XCTAssertFalse(policy.isInternal(try address(text)), text)
        }
    }

    /// Names that are internal by themselves are caught before anything is dialled, in any of
    /// the spellings a URL allows.
    func testInternalNames() throws {
        var policy = ClientAccessPolicy()
        policy.ownAddresses = [try address("192.168.1.5")]
        let internalNames = ["localhost", "LOCALHOST.", "api.localhost", "127.0.0.1", "[::1]", "::1", "0x7f.1", "2130706433",
                        "127.1", "0177.0.0.1", "[::ffff:127.0.0.1]", "169.254.169.254", "0.0.0.0", "192.168.1.5", "[fe80::1]"]
        for name in internalNames { XCTAssertNotNil(policy.internalAddress(named: name), name) }
        for name in ["example.com", "localhost.example.com", "mylocalhost", "10.0.0.1", "[2001:db8::1]", "192.168.1.6"] {
            XCTAssertNil(policy.internalAddress(named: name), name)
        }
    }
}
