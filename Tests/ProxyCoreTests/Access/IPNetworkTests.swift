import ProxyCore
import XCTest

/// Addresses compare by value whatever their spelling, and networks contain exactly the
/// addresses their prefix covers.
final class IPNetworkTests: XCTestCase {
    func testSpellingsOfOneAddressAreEqual() throws {
        XCTAssertEqual(IPAddressBytes("::1"), IPAddressBytes("0:0:0:0:0:0:0:1"))
        XCTAssertEqual(IPAddressBytes("[::1]"), IPAddressBytes("::1"))
        XCTAssertEqual(IPAddressBytes("fe80::1%eth0"), IPAddressBytes("fe80::1"))
        // An IPv4-mapped address is the IPv4 address it reaches: guards cannot be stepped around.
        XCTAssertEqual(IPAddressBytes("::ffff:127.0.0.1"), IPAddressBytes("127.0.0.1"))
        XCTAssertEqual(IPAddressBytes("::ffff:7f00:1")?.description, "127.0.0.1")
        XCTAssertEqual(IPAddressBytes("fd00::2")?.description, "fd00::2")
    }

    func testNonAddressesAreRefused() {
        for text in ["", "localhost", "1.2.3", "1.2.3.4.5", "256.1.1.1", "::g", "1.2.3.4/8", " 1.2.3.4", "[::1", "0x7f.1"] {
            XCTAssertNil(IPAddressBytes(text), text)
        }
    }

    func testClassification() throws {
        let loopback = ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.2"]
        for text in loopback { XCTAssertTrue(try XCTUnwrap(IPAddressBytes(text)).isLoopback, text) }
        for text in ["169.254.1.1", "fe80::1", "febf::1"] { XCTAssertTrue(try XCTUnwrap(IPAddressBytes(text)).isLinkLocal, text) }
        for text in ["169.253.1.1", "fec0::1", "10.0.0.1", "128.0.0.1", "::2"] {
            let address = try XCTUnwrap(IPAddressBytes(text))
            XCTAssertFalse(address.isLoopback || address.isLinkLocal, text)
        }
        XCTAssertTrue(try XCTUnwrap(IPAddressBytes("0.0.0.0")).isUnspecified)
        XCTAssertTrue(try XCTUnwrap(IPAddressBytes("::")).isUnspecified)
    }

    func testNetworksContainTheirPrefix() throws {
        func network(_ text: String) throws -> IPNetwork { try IPNetwork.parse(text).get() }
        let lan = try network("192.168.1.0/24")
        XCTAssertTrue(lan.contains(try XCTUnwrap(IPAddressBytes("192.168.1.200"))))
        XCTAssertFalse(lan.contains(try XCTUnwrap(IPAddressBytes("192.168.2.1"))))
        XCTAssertFalse(lan.contains(try XCTUnwrap(IPAddressBytes("::ffff:192.168.2.1"))))
        XCTAssertTrue(lan.contains(try XCTUnwrap(IPAddressBytes("::ffff:192.168.1.1"))))
        // A prefix that is not a whole number of bytes.
        let odd = try network("10.0.0.0/9")
        XCTAssertTrue(odd.contains(try XCTUnwrap(IPAddressBytes("10.127.255.255"))))
        XCTAssertFalse(odd.contains(try XCTUnwrap(IPAddressBytes("10.128.0.0"))))
        // One address, and everything.
        let one = try network("10.0.0.7")
        XCTAssertEqual(one.prefixLength, 32)
        XCTAssertTrue(one.contains(try XCTUnwrap(IPAddressBytes("10.0.0.7"))))
        XCTAssertFalse(one.contains(try XCTUnwrap(IPAddressBytes("10.0.0.6"))))
        XCTAssertTrue(try network("0.0.0.0/0").contains(try XCTUnwrap(IPAddressBytes("8.8.8.8"))))
        XCTAssertFalse(try network("0.0.0.0/0").contains(try XCTUnwrap(IPAddressBytes("2001:db8::1"))))
        let v6 = try network("fd00::/8")
        XCTAssertTrue(v6.contains(try XCTUnwrap(IPAddressBytes("fd12:3456::1"))))
        XCTAssertFalse(v6.contains(try XCTUnwrap(IPAddressBytes("fe00::1"))))
        XCTAssertFalse(v6.contains(try XCTUnwrap(IPAddressBytes("10.0.0.1"))))
        XCTAssertEqual(try network(" 10.1.0.0/16 ").description, "10.1.0.0/16")
    }

    func testBadNetworksSayWhy() {
        let cases: [(String, String)] = [
            ("", "no address"), ("10.0.0.0/33", "prefix length from 0 to 32"), ("fd00::/129", "from 0 to 128"),
            ("10.0.0.0/", "prefix length"), ("10.0.0.0/+8", "prefix length"), ("10.0.0.0/8/8", "prefix length"),
            ("example.com/24", "is not an IPv4 or IPv6 address"), ("10.0.0.0/-1", "prefix length"),
        ]
        for (text, expected) in cases {
            switch IPNetwork.parse(text) {
            case .success(let network): XCTFail("\(text) parsed as \(network)")
            case .failure(let error):
                XCTAssertTrue(error.description.contains(expected), "\(text): \(error)")
                XCTAssertTrue(error.description.contains("192.168.1.0/24"), "names a working form: \(error)")
            }
        }
    }
}
