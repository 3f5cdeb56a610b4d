import ProxyCore
import XCTest

/// Host wildcards: what each form matches, and every refusal with its exact message.
final class HostPatternTests: XCTestCase {
    private func pattern(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> HostPattern? {
        do {
            return try HostPattern(text)
        } catch {
            XCTFail("'\(text)' refused: \(error.message)", file: file, line: line)
            return nil
        }
    }

    private func assertMatches(_ text: String, _ hosts: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let pattern = pattern(text, file: file, line: line) else { return }
        for host in hosts {
            XCTAssertTrue(pattern.matches(host: host), "'\(text)' should match '\(host)'", file: file, line: line)
        }
    }

    private func assertRejects(_ text: String, _ hosts: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let pattern = pattern(text, file: file, line: line) else { return }
        for host in hosts {
            XCTAssertFalse(pattern.matches(host: host), "'\(text)' should not match '\(host)'", file: file, line: line)
        }
    }

    private func message(_ text: String) -> String? {
        do {
            _ = try HostPattern(text)
            return nil
        } catch {
            return error.message
        }
    }

    // MARK: - Kinds

    /// Each form parses to its kind, with normalized strings inside.
    func testKinds() {
        XCTAssertEqual(pattern("*")?.kind, .any)
        XCTAssertEqual(pattern("Example.COM.")?.kind, .exact("example.com"))
        XCTAssertEqual(pattern("*.Example.com")?.kind, .subdomains(of: "example.com"))
        XCTAssertEqual(pattern("api-*.example.com")?.kind, .glob("api-*.example.com"))
        XCTAssertEqual(pattern("*.example.*")?.kind, .glob("*.example.*"))
        XCTAssertEqual(pattern("host?.example.com")?.kind, .glob("host?.example.com"))
        XCTAssertEqual(pattern("*.")?.kind, .any)
        XCTAssertEqual(pattern("*.bücher.example")?.kind, .subdomains(of: "xn--bcher-kva.example"))
    }

    /// text and description are the pattern as written, not its normalized form.
    func testTextIsAsWritten() {
        let written = "*.Bücher.Example."
        XCTAssertEqual(pattern(written)?.text, written)
        XCTAssertEqual(pattern(written)?.description, written)
    }

    // MARK: - Matching

    /// `*` matches every host, IP literals included.
    func testAnyMatchesEverything() {
        assertMatches("*", ["example.com", "a.b.c", "localhost", "127.0.0.1", "::1", "xn--bcher-kva.example"])
    }

    /// An exact pattern matches only that host, ignoring case on either side.
    func testExactIsCaseInsensitiveBothWays() {
        assertMatches("example.com", ["example.com", "EXAMPLE.COM", "Example.Com"])
        assertMatches("EXAMPLE.com", ["example.com", "eXample.COM"])
        assertRejects("example.com", ["www.example.com", "example.co", "example.com.au", "xexample.com"])
    }

    /// A trailing dot on the pattern or on the host makes no difference.
    func testTrailingDots() {
        assertMatches("example.com.", ["example.com", "example.com."])
        assertMatches("example.com", ["example.com."])
        assertMatches("*.example.com.", ["a.example.com."])
        assertRejects("example.com", ["example.com.."])
    }

    /// `*.x` matches subdomains at any depth, not x itself, not names merely ending in x.
    func testSubdomainsAnyDepth() {
        assertMatches("*.example.com", ["a.example.com", "a.b.example.com", "A.B.C.EXAMPLE.COM", "x.example.com."])
        assertRejects("*.example.com", ["example.com", "badexample.com", "a.badexample.com", "example.com.evil",
                                        ".example.com", "com", ""])
    }

    /// The suffix test works on exact byte boundaries (host as long as the suffix, one byte longer).
    func testSubdomainBoundaries() {
        guard let pattern = pattern("*.ab") else { return }
        XCTAssertFalse(pattern.matches(normalizedHost: "ab"))
        XCTAssertFalse(pattern.matches(normalizedHost: ".ab"))
        XCTAssertFalse(pattern.matches(normalizedHost: "xab"))
        XCTAssertTrue(pattern.matches(normalizedHost: "x.ab"))
    }

    /// Globs are anchored: `*` spans any run including dots, `?` exactly one character.
    func testGlobs() {
        assertMatches("api-*.example.com", ["api-1.example.com", "api-.example.com", "API-eu.west.example.com"])
        assertRejects("api-*.example.com", ["api.example.com", "www.api-1.example.com", "api-1.example.com.evil"])
        assertMatches("*.example.*", ["www.example.com", "a.b.example.co.uk"])
        assertRejects("*.example.*", ["example.com", "www.example"])
        assertMatches("host?.example.com", ["host1.example.com", "hostA.example.com"])
        assertRejects("host?.example.com", ["host.example.com", "host12.example.com"])
        assertMatches("*example.com", ["example.com", "badexample.com", "www.example.com"])
        assertMatches("192.168.*", ["192.168.0.1", "192.168.10.20"])
        assertRejects("192.168.*", ["192.169.0.1", "10.192.168.1"])
        assertMatches("a*b*c", ["abc", "aXbYc", "abbbc", "acbc"])
        assertRejects("a*b*c", ["ab", "acb", "abcd"])
        assertMatches("?", ["a"])
        assertRejects("?", ["", "ab"])
    }

    /// A pathological glob against a long host finishes and answers false (linear backtracking).
    func testGlobWorstCaseFinishes() {
        guard let pattern = pattern("*a*a*a*a*b") else { return }
        XCTAssertFalse(pattern.matches(normalizedHost: String(repeating: "a", count: 200)))
        guard let many = self.pattern(String(repeating: "*a", count: 31) + "b") else { return }
        XCTAssertFalse(many.matches(normalizedHost: String(repeating: "a", count: 240)))
        XCTAssertTrue(many.matches(normalizedHost: String(repeating: "a", count: 240) + "b"))
    }

    /// A Unicode pattern matches the punycode host and the Unicode host, in any case.
    func testIDNPatterns() {
        assertMatches("bücher.example", ["xn--bcher-kva.example", "bücher.example", "BÜCHER.example", "XN--BCHER-KVA.EXAMPLE."])
        assertMatches("xn--bcher-kva.example", ["bücher.example"])
        assertMatches("*.bücher.example", ["www.xn--bcher-kva.example", "www.bücher.example", "a.b.xn--bcher-kva.example"])
        assertRejects("*.bücher.example", ["xn--bcher-kva.example", "bucher.example", "www.bucher.example"])
        assertMatches("*.例え.テスト", ["www.xn--r8jz45g.xn--zckzah"])
    }

    /// IPv6 patterns match the address however pattern and host spell it, brackets or not.
    func testIPv6Literals() {
        for text in ["::1", "[::1]", "0:0::1", "[0:0:0:0:0:0:0:1]"] {
            XCTAssertEqual(pattern(text)?.kind, .exact("::1"), text)
            assertMatches(text, ["::1", "[::1]", "0:0:0:0:0:0:0:1", "[0000::0001]"])
            assertRejects(text, ["::2", "127.0.0.1", "1"])
        }
        assertMatches("2001:DB8::1", ["2001:db8:0:0:0:0:0:1", "[2001:0db8::0001]"])
        // An IPv4-mapped address is its IPv4 address: a connection to one reaches the other.
        XCTAssertEqual(pattern("::FFFF:1.2.3.4")?.kind, .exact("1.2.3.4"))
        XCTAssertEqual(pattern("[::ffff:102:304]")?.kind, .exact("1.2.3.4"))
        assertMatches("::ffff:1.2.3.4", ["1.2.3.4", "[::ffff:1.2.3.4]"])
        assertRejects("::ffff:1.2.3.4", ["::1.2.3.4", "1.2.3.5"])
    }

    /// IPv4 patterns are exact matches on the address, however pattern and host spell it.
    func testIPv4Literals() {
        XCTAssertEqual(pattern("127.0.0.1")?.kind, .exact("127.0.0.1"))
        XCTAssertEqual(pattern("0x7f.1")?.kind, .exact("127.0.0.1"))
        assertMatches("127.0.0.1", ["127.0.0.1", "127.0.0.1.", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "2130706433",
                                    "0x7f.1", "0177.0.0.1", "127.1", "0x7f000001"])
        assertMatches("2130706433", ["127.0.0.1"])
        assertRejects("127.0.0.1", ["127.0.0.10", "127.0.0.1.example.com", "::1", "127.0.0.1.1", "0x7f.1.example"])
    }

    /// matches(normalizedHost:) and matches(host:) agree on normalized input.
    func testNormalizedHostEntryPoint() {
        guard let pattern = pattern("*.example.com") else { return }
        let host = HostName.normalized("WWW.Example.COM.")
        XCTAssertTrue(pattern.matches(normalizedHost: host))
        XCTAssertEqual(pattern.matches(normalizedHost: host), pattern.matches(host: "WWW.Example.COM."))
    }

    /// A list matches when any of its patterns does; an empty list matches nothing.
    func testPatternList() throws {
        let list = try HostPatternList(parsing: ["*.example.com", "api.test", "::1"])
        XCTAssertEqual(list.patterns.map(\.text), ["*.example.com", "api.test", "::1"])
        XCTAssertTrue(list.matches(normalizedHost: "www.example.com"))
        XCTAssertTrue(list.matches(normalizedHost: "api.test"))
        XCTAssertTrue(list.matches(host: "[0::1]"))
        XCTAssertFalse(list.matches(normalizedHost: "example.com"))
        XCTAssertFalse(HostPatternList().matches(normalizedHost: "example.com"))
        XCTAssertTrue(HostPatternList().isEmpty)
        XCTAssertThrowsError(try HostPatternList(parsing: ["ok.example", "bad..example"])) { error in
            XCTAssertEqual((error as? HostPatternError)?.message,
                           "host pattern 'bad..example' has an empty label (two dots in a row): remove the extra dot")
        }
    }

    /// Patterns are hashable values: equal text, equal pattern.
    func testHashable() throws {
        let set: Set<HostPattern> = [try HostPattern("*.example.com"), try HostPattern("*.example.com"), try HostPattern("a.test")]
        XCTAssertEqual(set.count, 2)
    }

    // MARK: - Refusals

    /// An empty pattern is refused with examples of what to write.
    func testEmptyPattern() {
        XCTAssertEqual(message(""),
                       "host pattern is empty: write a host such as 'example.com' or '*.example.com', or '*' for every host")
    }

    /// Whitespace is refused, named, and a line break is escaped so the message is one line.
    func testWhitespace() {
        XCTAssertEqual(message("example .com"),
                       "host pattern 'example .com' contains a space: remove it (one host per pattern, no spaces)")
        XCTAssertEqual(message(" example.com"),
                       "host pattern ' example.com' contains a space: remove it (one host per pattern, no spaces)")
        XCTAssertEqual(message("example.com\t"),
                       "host pattern 'example.com\\t' contains a tab: remove it (one host per pattern, no spaces)")
        XCTAssertEqual(message("example.com\n"),
                       "host pattern 'example.com\\n' contains a line break: remove it (one host per pattern, no spaces)")
        XCTAssertEqual(message("example\u{A0}com"),
                       "host pattern 'example\u{A0}com' contains whitespace (U+00A0): remove it (one host per pattern, no spaces)")
    }

    /// A character outside letters, digits, '-', '_', '.', '*', '?' is named in the message.
    func testForbiddenCharacters() {
        let rule = "use only letters, digits, '-', '_', '.' and the wildcards '*' and '?'"
        XCTAssertEqual(message("exa$mple.com"), "host pattern 'exa$mple.com' contains '$': \(rule)")
        XCTAssertEqual(message("user@example.com"), "host pattern 'user@example.com' contains '@': \(rule)")
        XCTAssertEqual(message("fe80::1%eth0"), "host pattern 'fe80::1%eth0' contains '%': \(rule)")
        XCTAssertEqual(message("a\u{0}b"), "host pattern 'a\\u{0}b' contains U+0000: \(rule)")
        XCTAssertEqual(message("example。com"), "host pattern 'example。com' contains '。' (U+3002): \(rule)")
        XCTAssertEqual(message("😀.example"), "host pattern '😀.example' contains '😀' (U+1F600): \(rule)")
        XCTAssertEqual(message("/x"), "host pattern '/x' contains '/': \(rule)")
    }

    /// Unicode letters and the combining marks some scripts need are accepted.
    func testUnicodeLettersAccepted() {
        XCTAssertEqual(pattern("हिन्दी.example")?.kind, .exact("xn--j2bd4cyah0f.example"))
        XCTAssertEqual(pattern("Ελλάδα.example")?.kind, .exact("xn--hxakic4aa.example"))
    }

    /// A port is refused, pointing to the rule's port: key, for names, IPv4 and bracketed IPv6.
    func testPortSuffix() {
        XCTAssertEqual(message("example.com:443"),
                       "host pattern 'example.com:443' has a port: host patterns take no port; write 'example.com' and put the port in the rule's 'port:' key")
        XCTAssertEqual(message("*.example.com:8080"),
                       "host pattern '*.example.com:8080' has a port: host patterns take no port; write '*.example.com' and put the port in the rule's 'port:' key")
        XCTAssertEqual(message("127.0.0.1:80"),
                       "host pattern '127.0.0.1:80' has a port: host patterns take no port; write '127.0.0.1' and put the port in the rule's 'port:' key")
        XCTAssertEqual(message("[::1]:443"),
                       "host pattern '[::1]:443' has a port: host patterns take no port; write '[::1]' and put the port in the rule's 'port:' key")
    }

    /// A URL is refused with its host as the fix; a path after the host too.
    func testURLAndPath() {
        XCTAssertEqual(message("https://example.com/path"),
                       "host pattern 'https://example.com/path' is a URL: write only the host, 'example.com'")
        XCTAssertEqual(message("http://user:pw@Example.com:8080/?q"),
                       "host pattern 'http://user:pw@Example.com:8080/?q' is a URL: write only the host, 'Example.com'")
        XCTAssertEqual(message("https://[::1]:8443/"),
                       "host pattern 'https://[::1]:8443/' is a URL: write only the host, '[::1]'")
        XCTAssertEqual(message("https://"),
                       "host pattern 'https://' is a URL: write only its host, such as 'example.com'")
        XCTAssertEqual(message("example.com/api"),
                       "host pattern 'example.com/api' has a path: write only the host, 'example.com' (host patterns do not match paths)")
    }

    /// Empty labels are refused; a leading dot suggests `*.` for subdomains.
    func testEmptyLabels() {
        XCTAssertEqual(message("a..b"),
                       "host pattern 'a..b' has an empty label (two dots in a row): remove the extra dot")
        XCTAssertEqual(message("example.com.."),
                       "host pattern 'example.com..' has an empty label (two dots in a row): remove the extra dot")
        XCTAssertEqual(message("..example.com"),
                       "host pattern '..example.com' has an empty label (two dots in a row): remove the extra dot")
        XCTAssertEqual(message(".example.com"),
                       "host pattern '.example.com' starts with a dot: write '*.example.com' for its subdomains, or 'example.com' for the host itself")
        XCTAssertEqual(message("."),
                       "host pattern '.' has no name, only dots: write a host such as 'example.com', or '*' for every host")
        XCTAssertEqual(message(".."),
                       "host pattern '..' has no name, only dots: write a host such as 'example.com', or '*' for every host")
    }

    /// A wildcard inside a non-ASCII label is refused, asking for the punycode form.
    func testWildcardInUnicodeLabel() {
        XCTAssertEqual(message("bü*.example"),
                       "host pattern 'bü*.example' has a wildcard in the non-ASCII label 'bü*': write that label in its punycode 'xn--' form to put a wildcard in it")
        XCTAssertEqual(message("*.?ü.example"),
                       "host pattern '*.?ü.example' has a wildcard in the non-ASCII label '?ü': write that label in its punycode 'xn--' form to put a wildcard in it")
    }

    /// Labels over 63 bytes and names over 253 bytes, both measured after normalization, are refused.
    func testLengthLimits() {
        let label63 = String(repeating: "a", count: 63)
        XCTAssertNotNil(pattern("\(label63).example"))
        let label64 = String(repeating: "a", count: 64)
        XCTAssertEqual(message("\(label64).example"),
                       "host pattern '\(label64).example' has a label of 64 bytes ('\(label64)' after normalization): a DNS label holds at most 63 bytes; shorten it")
        // 20 scattered CJK characters are 20 characters, but 64 bytes as 'xn--' + Punycode.
        let ideographs = String(String.UnicodeScalarView((0..<20).compactMap { Unicode.Scalar(0x4E00 + $0 * 997) }))
        let encoded = "xn--" + (Punycode.encode(ideographs) ?? "")
        XCTAssertEqual(encoded.utf8.count, 64)
        XCTAssertEqual(message("\(ideographs).example"),
                       "host pattern '\(ideographs).example' has a label of 64 bytes ('\(encoded)' after normalization): a DNS label holds at most 63 bytes; shorten it")

        let name253 = [String](repeating: label63, count: 3).joined(separator: ".") + "." + String(repeating: "b", count: 61)
        XCTAssertEqual(name253.utf8.count, 253)
        XCTAssertNotNil(pattern(name253))
        XCTAssertNotNil(pattern(name253 + "."))
        let name254 = name253 + "b"
        XCTAssertEqual(message(name254),
                       "host pattern '\(name254)' is 254 bytes long after normalization: a host name holds at most 253 bytes; shorten it")
    }

    /// Brackets only enclose a whole IPv6 address.
    func testBrackets() {
        XCTAssertEqual(message("[example.com]"),
                       "host pattern '[example.com]' is bracketed but is not an IPv6 address: brackets are only for IPv6 literals such as '[::1]'; write names and IPv4 addresses without them")
        XCTAssertEqual(message("[1.2.3.4]"),
                       "host pattern '[1.2.3.4]' is bracketed but is not an IPv6 address: brackets are only for IPv6 literals such as '[::1]'; write names and IPv4 addresses without them")
        XCTAssertEqual(message("[]"),
                       "host pattern '[]' is bracketed but is not an IPv6 address: brackets are only for IPv6 literals such as '[::1]'; write names and IPv4 addresses without them")
        XCTAssertEqual(message("[::1"),
                       "host pattern '[::1' has '[' or ']' out of place: brackets may only enclose a whole IPv6 address, such as '[::1]'; remove them")
        XCTAssertEqual(message("a[::1]"),
                       "host pattern 'a[::1]' has '[' or ']' out of place: brackets may only enclose a whole IPv6 address, such as '[::1]'; remove them")
        XCTAssertEqual(message("[::1]x"),
                       "host pattern '[::1]x' has '[' or ']' out of place: brackets may only enclose a whole IPv6 address, such as '[::1]'; remove them")
    }

    /// A ':' is only for IPv6 addresses, which take no wildcards.
    func testColons() {
        XCTAssertEqual(message("1:2:3"),
                       "host pattern '1:2:3' contains ':' but is not an IPv6 address: write a complete IPv6 address such as '2001:db8::1' (host patterns take no port)")
        XCTAssertEqual(message("example.com:http"),
                       "host pattern 'example.com:http' contains ':' but is not an IPv6 address: write a complete IPv6 address such as '2001:db8::1' (host patterns take no port)")
        XCTAssertEqual(message("2001:db8::*"),
                       "host pattern '2001:db8::*' puts a wildcard in an IPv6 address: IPv6 addresses match only exactly; write the whole address")
        XCTAssertEqual(message("[::?]"),
                       "host pattern '[::?]' puts a wildcard in an IPv6 address: IPv6 addresses match only exactly; write the whole address")
    }
}
