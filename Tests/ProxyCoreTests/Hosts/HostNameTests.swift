@testable import ProxyCore
import XCTest

/// The canonical host text that every host comparison is made on.
final class HostNameTests: XCTestCase {
    /// ASCII letters are lower-cased; digits, '-', '_' and '.' are kept.
    func testLowercasesASCII() {
        XCTAssertEqual(HostName.normalized("WWW.Example.COM"), "www.example.com")
        XCTAssertEqual(HostName.normalized("My_Host-1.Example"), "my_host-1.example")
    }

    /// Exactly one trailing dot (the DNS root) is removed.
    func testRemovesOneTrailingDot() {
        XCTAssertEqual(HostName.normalized("example.com."), "example.com")
        XCTAssertEqual(HostName.normalized("Example.com."), "example.com")
        XCTAssertEqual(HostName.normalized("example.com.."), "example.com.")
    }

    /// Non-ASCII labels are lower-cased and written as xn-- Punycode; ASCII labels beside them are kept.
    func testIDNLabelsBecomePunycode() {
        XCTAssertEqual(HostName.normalized("bücher.example"), "xn--bcher-kva.example")
        XCTAssertEqual(HostName.normalized("BÜCHER.Example"), "xn--bcher-kva.example")
        XCTAssertEqual(HostName.normalized("www.München.de."), "www.xn--mnchen-3ya.de")
        XCTAssertEqual(HostName.normalized("例え.テスト"), "xn--r8jz45g.xn--zckzah")
    }

    /// Hosts already in punycode stay as they are (only their ASCII case is folded).
    func testPunycodeHostsStay() {
        XCTAssertEqual(HostName.normalized("xn--bcher-kva.example"), "xn--bcher-kva.example")
        XCTAssertEqual(HostName.normalized("XN--BCHER-KVA.example"), "xn--bcher-kva.example")
    }

    /// IPv6 literals lose their brackets and take inet_ntop's spelling, whatever the input form.
    func testIPv6Canonical() {
        XCTAssertEqual(HostName.normalized("::1"), "::1")
        XCTAssertEqual(HostName.normalized("[::1]"), "::1")
        XCTAssertEqual(HostName.normalized("0:0::1"), "::1")
        XCTAssertEqual(HostName.normalized("[0000:0000:0000:0000:0000:0000:0000:0001]"), "::1")
        XCTAssertEqual(HostName.normalized("2001:DB8:0:0:1:0:0:1"), "2001:db8::1:0:0:1")
        XCTAssertEqual(HostName.normalized("[2001:db8::]"), "2001:db8::")
    }

    /// An IPv4-mapped IPv6 address is its IPv4 address (a connection to it goes there); other
    /// IPv6 forms holding an IPv4 address stay IPv6.
    func testIPv4MappedIPv6() {
        XCTAssertEqual(HostName.normalized("::FFFF:1.2.3.4"), "1.2.3.4")
        XCTAssertEqual(HostName.normalized("[::ffff:0102:0304]"), "1.2.3.4")
        XCTAssertEqual(HostName.normalized("[0:0:0:0:0:ffff:7f00:1]"), "127.0.0.1")
        XCTAssertEqual(HostName.normalized("::ffff:7f00:1%eth0"), "::ffff:127.0.0.1%eth0")
        XCTAssertEqual(HostName.normalized("::1.2.3.4"), "::1.2.3.4")
        XCTAssertEqual(HostName.normalized("64:ff9b::1.2.3.4"), "64:ff9b::102:304")
    }

    /// An IPv6 zone is kept after the canonical address, lower-cased.
    func testIPv6ZoneKept() {
        XCTAssertEqual(HostName.normalized("FE80:0::1%ETH0"), "fe80::1%eth0")
        XCTAssertEqual(HostName.normalized("[fe80::1%eth0]"), "fe80::1%eth0")
    }

    /// IPv4 literals stay in dotted-quad form; a trailing dot is dropped; numbers that are no
    /// address stay as they are (lower-cased).
    func testIPv4() {
        XCTAssertEqual(HostName.normalized("127.0.0.1"), "127.0.0.1")
        XCTAssertEqual(HostName.normalized("127.0.0.1."), "127.0.0.1")
        XCTAssertEqual(HostName.normalized("1.2.3.4.5"), "1.2.3.4.5")
        XCTAssertEqual(HostName.normalized("A.0X1G"), "a.0x1g")
        XCTAssertEqual(HostName.normalized("256.0.0.1"), "256.0.0.1")
    }

    /// Every other IPv4 notation `getaddrinfo` and browsers accept becomes the dotted quad, so a
    /// rule on 127.0.0.1 sees it (table: input → normalized).
    func testOtherIPv4NotationsBecomeDottedQuads() {
        let table: [(String, String)] = [
            ("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0X7F.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
            ("127.1", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("127.1.", "127.0.0.1"),
            ("0x7F.0.0.1", "127.0.0.1"), ("127.000.000.001", "127.0.0.1"), ("[::ffff:127.0.0.1]", "127.0.0.1"),
            ("1.2.3", "1.2.0.3"), ("0", "0.0.0.0"), ("0x", "0.0.0.0"), ("01.02.03.04", "1.2.3.4"),
        ]
        for (input, expected) in table {
            XCTAssertEqual(HostName.normalized(input), expected, input)
            XCTAssertEqual(HostName.normalized(Substring(input)), expected, input)
        }
    }

    /// Bracketed text that is not an IPv6 address keeps its brackets, so it equals no real name.
    func testBracketedNonIPv6KeepsBrackets() {
        XCTAssertEqual(HostName.normalized("[Example.com]"), "[example.com]")
        XCTAssertEqual(HostName.normalized("[]"), "[]")
    }

    /// The fast path hands back the very same string (same storage) for a normalized host.
    func testFastPathReturnsSameString() {
        let host = "api.service-01.example.com"  // longer than 15 bytes: heap storage, not a small string
        let result = HostName.normalized(host)
        XCTAssertEqual(result, host)
        let hostAddress = host.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
        let resultAddress = result.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
        XCTAssertNotNil(hostAddress)
        XCTAssertEqual(hostAddress, resultAddress)
        for normalized in ["example.com", "a_b.c-d.e", "127.0.0.1", "xn--bcher-kva.example", "localhost", ""] {
            XCTAssertEqual(HostName.normalized(normalized), normalized)
        }
    }

    /// The fast path only takes what the slow path would return unchanged.
    func testFastPathAgreesWithSlowPath() {
        for host in ["example.com", "a.b.c", "127.0.0.1", "0.0.0.0", "255.255.255.255", "a..b", "x-_y", "..a", "-",
                     "a.1b", "1a", "a.0xg", "a.x1", "a.0x1-"] {
            XCTAssertTrue(HostName.isAlreadyNormalized(host.utf8), host)
            XCTAssertEqual(HostName.normalizedSlowly(host), host, host)
        }
        for host in ["Example.com", "example.com.", "::1", "bücher", "[::1]", "a b", "1.2.3", "0127.0.0.1", "127.1",
                     "2130706433", "0x7f.1", "a.0x", "127.0.0.01", "256.0.0.1", "1.2.3.4.5", "1.2.3.1000", "a.1"] {
            XCTAssertFalse(HostName.isAlreadyNormalized(host.utf8), host)
        }
    }

    /// Attack on the fast path: over random hosts from the bytes it takes (and the notations'
    /// letters), whatever it accepts the slow path returns unchanged, and normalizing twice
    /// changes nothing more.
    func testFastPathAgreesWithSlowPathOnRandomHosts() {
        var random = RandomText("0123456789..xabfgz-_X")
        var fast = 0
        for _ in 0..<50_000 {
            let host = random.next(lengths: 0...16)
            let normalized = HostName.normalizedSlowly(host)
            if HostName.isAlreadyNormalized(host.utf8) {
                fast += 1
                XCTAssertEqual(normalized, host, host)
            }
            if !host.contains("..") {  // a second trailing dot survives one pass: `a..` → `a.` → `a`
                XCTAssertEqual(HostName.normalized(normalized), normalized, host)
            }
        }
        XCTAssertGreaterThan(fast, 1000)
    }

    /// Substrings are accepted and normalized like strings.
    func testSubstringInput() {
        let authority = "WWW.Example.com:443"
        let host = authority.split(separator: ":")[0]
        XCTAssertEqual(HostName.normalized(host), "www.example.com")
    }

    /// isIPAddress tells normalized IPv4/IPv6 literals (a zone allowed) from names.
    func testIsIPAddress() {
        for address in ["127.0.0.1", "::1", "2001:db8::1", "::ffff:1.2.3.4", "fe80::1%eth0"] {
            XCTAssertTrue(HostName.isIPAddress(address), address)
        }
        for name in ["example.com", "1.2.3.4.5", "256.0.0.1", "", "[::1]", "fe80::1%", "localhost", "::g"] {
            XCTAssertFalse(HostName.isIPAddress(name), name)
        }
    }
}
