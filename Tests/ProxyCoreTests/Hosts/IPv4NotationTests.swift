#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import ProxyCore
import XCTest

/// The IPv4 notations besides the dotted quad, read as WHATWG URL and `inet_aton` read them.
final class IPv4NotationTests: XCTestCase {
    /// Every spelling of 127.0.0.1 an attacker tried, and the other notations, give the address.
    func testNotationsOfOneAddress() {
        let table: [(String, String)] = [
            ("127.0.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"),
            ("0X7F.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("127.1", "127.0.0.1"),
            ("0x7f000001", "127.0.0.1"), ("0x7F000001", "127.0.0.1"), ("127.0.1", "127.0.0.1"),
            ("0x7f.0.0.0x1", "127.0.0.1"), ("0177.0x0.00.1", "127.0.0.1"), ("127.0.0.1.", "127.0.0.1"),
            ("00000000000000000177.1", "127.0.0.1"), ("0x0000000000000007f.1", "127.0.0.1"),
            ("0", "0.0.0.0"), ("0x", "0.0.0.0"), ("4294967295", "255.255.255.255"), ("0xffffffff", "255.255.255.255"),
            ("1.2.3", "1.2.0.3"), ("1.16777215", "1.255.255.255"), ("037777777777", "255.255.255.255"),
            ("1.0x", "1.0.0.0"),
        ]
        for (text, expected) in table {
            XCTAssertTrue(IPv4Notation.endsInNumber(text.utf8), text)
            XCTAssertEqual(IPv4Notation.address(text.utf8).map(IPv4Notation.dottedQuad), expected, text)
        }
    }

    /// Numbers that are no address: too many parts, a part too large, a digit outside its radix,
    /// an empty part, overflow.
    func testInvalidNumbers() {
        for text in ["1.2.3.4.5", "256.0.0.1", "1.256.0.1", "1.2.65536", "4294967296", "0x100000000", "08", "0x7g",
                     "1..2", ".1", "1.2.3.4..", "99999999999999999999999", "0xfffffffffffffffffffff", "", ".",
                     "1.2.3.-1", "1.2.3.+1", "1e2"] {
            XCTAssertNil(IPv4Notation.address(text.utf8), text)
        }
    }

    /// "Ends in a number": the last label decides, as in WHATWG URL (a trailing dot is ignored).
    func testEndsInNumber() {
        for text in ["1", "a.1", "example.0x", "a.0x1f", "a.0X1F", "1.", "a.09", "x.0"] {
            XCTAssertTrue(IPv4Notation.endsInNumber(text.utf8), text)
        }
        for text in ["", ".", "a", "1.a", "a.1a", "a.0xg", "a.x1", "1..", "a.-1", "localhost", "a.0x1-"] {
            XCTAssertFalse(IPv4Notation.endsInNumber(text.utf8), text)
        }
    }

    /// Differential against glibc's `inet_aton`, which `getaddrinfo` uses for numeric hosts: every
    /// string it accepts is read as the same address here. (Here accepts two more forms WHATWG
    /// allows: an empty `0x` part and one trailing dot.)
    func testAgreesWithInetAton() {
        var random = RandomText("0123456789xXaAfFg.")
        var accepted = 0
        for round in 0..<60_000 {
            let text = random.next(lengths: 1...(round % 3 == 0 ? 24 : 10))
            var expected = in_addr()
            let libc = text.withCString { inet_aton($0, &expected) } != 0
            let ours = IPv4Notation.address(text.utf8)
            if libc {
                accepted += 1
                XCTAssertTrue(IPv4Notation.endsInNumber(text.utf8), text)
                XCTAssertEqual(ours, UInt32(bigEndian: expected.s_addr), text)
            } else if ours != nil {
                let whatwgOnly = text.hasSuffix(".") || text.lowercased().split(separator: ".", omittingEmptySubsequences: false)
                    .contains("0x")
                XCTAssertTrue(whatwgOnly, "accepted here, refused by inet_aton: \(text)")
            }
        }
        XCTAssertGreaterThan(accepted, 100)
    }
}
