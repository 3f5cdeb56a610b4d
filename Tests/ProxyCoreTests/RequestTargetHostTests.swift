import ProxyCore
import XCTest

/// Every spelling of a host in a request-target: rewritten to the one form rules match and the
/// resolver dials, or refused with the exact reason the client reads in the 400.
final class RequestTargetHostTests: XCTestCase {
    private enum Outcome: Equatable {
        case host(String, port: Int)
        case refused(String)
    }

    private func outcome(_ uri: String, method: String) -> Outcome {
        do {
            switch try RequestTarget.parse(method: method, uri: uri) {
            case .absolute(_, let host, let port, _), .authority(let host, let port):
                return .host(host, port: port)
            case .origin:
                return .refused("origin-form")
            }
        } catch {
            return .refused(error.description)
        }
    }

    private func check(_ table: [(String, Outcome)], method: String, file: StaticString = #filePath, line: UInt = #line) {
        for (uri, expected) in table {
            XCTAssertEqual(outcome(uri, method: method), expected, "\(method) \(uri)", file: file, line: line)
        }
    }

    /// Other spellings of an address or a name become the canonical one, in absolute-form URLs.
    func testAbsoluteFormSpellingsAreCanonicalized() {
        check([
            ("http://2130706433/", .host("127.0.0.1", port: 80)),
            ("http://0x7f.1/", .host("127.0.0.1", port: 80)),
            ("http://0X7F.1/", .host("127.0.0.1", port: 80)),
            ("http://0177.0.0.1/", .host("127.0.0.1", port: 80)),
            ("http://127.1:8080/", .host("127.0.0.1", port: 8080)),
            ("http://0x7f000001/", .host("127.0.0.1", port: 80)),
            ("http://127.0.0.1./", .host("127.0.0.1", port: 80)),
            ("http://127.000.000.001/", .host("127.0.0.1", port: 80)),
            ("http://[::ffff:127.0.0.1]/", .host("127.0.0.1", port: 80)),
            ("http://[::FFFF:7F00:1]:8080/", .host("127.0.0.1", port: 8080)),
            ("http://[0:0::1]/", .host("::1", port: 80)),
            ("http://[0000:0000:0000:0000:0000:0000:0000:0001]:81/", .host("::1", port: 81)),
            ("http://user:pw@0x7f.1/", .host("127.0.0.1", port: 80)),
            ("http://EXAMPLE.Test./", .host("example.test", port: 80)),
            ("http://XN--BCHER-KVA.example/", .host("xn--bcher-kva.example", port: 80)),
            ("http://PROXYAPP.CERT./", .host("proxyapp.cert", port: 80)),
            ("http://a.1b/", .host("a.1b", port: 80)),
            ("http://_srv.example-1.test/", .host("_srv.example-1.test", port: 80)),
        ], method: "GET")
    }

    /// Spellings the resolver would read otherwise (or not at all), refused with a reason.
    func testAbsoluteFormRefusals() {
        check([
            ("http://%31%32%37.0.0.1/", .refused("host '%31%32%37.0.0.1' is percent-encoded: send the host itself")),
            ("http://ex%61mple.test/", .refused("host 'ex%61mple.test' is percent-encoded: send the host itself")),
            ("http://[::1%25lo]/", .refused("IPv6 zone identifiers are not supported: '[::1%25lo]'")),
            ("http://[fe80::1%eth0]:80/", .refused("IPv6 zone identifiers are not supported: '[fe80::1%eth0]'")),
            ("http://bücher.example/",
             .refused("host 'bücher.example' is not ASCII: send an internationalized name in punycode (xn--)")),
            ("http://[127.0.0.1]/", .refused("'[127.0.0.1]' is not an IPv6 address (only IPv6 goes in brackets)")),
            ("http://[example.test]/", .refused("'[example.test]' is not an IPv6 address (only IPv6 goes in brackets)")),
            ("http://[]/", .refused("missing host in '[]'")),
            ("http://1.2.3.4.5/", .refused("host '1.2.3.4.5' ends in a number but is not an IPv4 address")),
            ("http://256.0.0.1/", .refused("host '256.0.0.1' ends in a number but is not an IPv4 address")),
            ("http://4294967296/", .refused("host '4294967296' ends in a number but is not an IPv4 address")),
            ("http://a.0x10/", .refused("host 'a.0x10' ends in a number but is not an IPv4 address")),
            ("http://08/", .refused("host '08' ends in a number but is not an IPv4 address")),
            ("http://a..b/", .refused("host 'a..b' has an empty label")),
            ("http://.example.test/", .refused("host '.example.test' has an empty label")),
            ("http://example.test../", .refused("host 'example.test..' has an empty label")),
            ("http://127.0.0.1../", .refused("host '127.0.0.1..' has an empty label")),
            ("http://./", .refused("host '.' has an empty label")),
            ("http://0.0.0.0/", .refused("host '0.0.0.0' is the unspecified address 0.0.0.0, not a destination")),
            ("http://0/", .refused("host '0' is the unspecified address 0.0.0.0, not a destination")),
            ("http://0x/", .refused("host '0x' is the unspecified address 0.0.0.0, not a destination")),
            ("http://[::]/", .refused("host '[::]' is the unspecified address ::, not a destination")),
            ("http://[::ffff:0.0.0.0]/",
             .refused("host '[::ffff:0.0.0.0]' is the unspecified address 0.0.0.0, not a destination")),
            ("http://a<b/", .refused("invalid host 'a<b'")),
            ("http://a\\b/", .refused("invalid host 'a\\b'")),
            ("http://a|b/", .refused("invalid host 'a|b'")),
            ("http://a^b/", .refused("invalid host 'a^b'")),
            ("http://a[b/", .refused("invalid host 'a[b'")),
            ("http://::1/", .refused("host ':' has a ':': an IPv6 address goes in brackets, as in [::1]:443")),
        ], method: "GET")
    }

    /// CONNECT targets: the same canonical hosts, and every malformed authority refused.
    func testConnectTargets() {
        check([
            ("2130706433:443", .host("127.0.0.1", port: 443)),
            ("0x7f.1:443", .host("127.0.0.1", port: 443)),
            ("0177.0.0.1:443", .host("127.0.0.1", port: 443)),
            ("127.1:443", .host("127.0.0.1", port: 443)),
            ("0x7f000001:443", .host("127.0.0.1", port: 443)),
            ("[::ffff:127.0.0.1]:443", .host("127.0.0.1", port: 443)),
            ("[0:0::1]:8443", .host("::1", port: 8443)),
            ("LocalHost.:443", .host("localhost", port: 443)),
            ("example.test:00443", .host("example.test", port: 443)),
            ("user@example.test:443",
             .refused("CONNECT target 'user@example.test:443' must be host:port, without user information")),
            ("user:pw@example.test:443",
             .refused("CONNECT target 'user:pw@example.test:443' must be host:port, without user information")),
            ("%65xample.test:443", .refused("host '%65xample.test' is percent-encoded: send the host itself")),
            (":443", .refused("missing host in ':443'")),
            ("[]:443", .refused("missing host in '[]:443'")),
            ("example.test:0", .refused("invalid port '0'")),
            ("example.test:65536", .refused("invalid port '65536'")),
            ("example.test:443000", .refused("invalid port '443000'")),
            ("example.test:44a", .refused("invalid port '44a'")),
            ("example.test:+443", .refused("invalid port '+443'")),
            ("example.test:-1", .refused("invalid port '-1'")),
            ("example.test:", .refused("invalid port ''")),
            ("example.test", .refused("CONNECT target 'example.test' needs a port (host:port)")),
            ("example.test:443/path", .refused("invalid port '443/path'")),
            ("example.test/path:443", .refused("invalid host 'example.test/path'")),
            ("::1:443", .refused("host '::1' has a ':': an IPv6 address goes in brackets, as in [::1]:443")),
            ("[::1]", .refused("CONNECT target '[::1]' needs a port (host:port)")),
            ("[::1]443", .refused("unexpected text after IPv6 literal in '[::1]443'")),
            ("[example.test]:443", .refused("'[example.test]' is not an IPv6 address (only IPv6 goes in brackets)")),
            ("[127.0.0.1]:443", .refused("'[127.0.0.1]' is not an IPv6 address (only IPv6 goes in brackets)")),
            ("[fe80::1%25eth0]:443", .refused("IPv6 zone identifiers are not supported: '[fe80::1%25eth0]'")),
            ("1.2.3.4.5:443", .refused("host '1.2.3.4.5' ends in a number but is not an IPv4 address")),
            ("0.0.0.0:443", .refused("host '0.0.0.0' is the unspecified address 0.0.0.0, not a destination")),
            ("a..b:443", .refused("host 'a..b' has an empty label")),
        ], method: "CONNECT")
    }

    /// Attack: random hosts in both forms never crash the parser, and whatever it accepts is
    /// already normalized (what the rules match is what the resolver gets).
    func testAcceptedHostsAreAlwaysNormalized() {
        var random = RandomText("0123456789.xXaAfg-_%@[]:Z")
        var accepted = 0
        for _ in 0..<20_000 {
            let host = random.next(lengths: 1...14)
            for (method, uri) in [("GET", "http://\(host)/"), ("CONNECT", "\(host):443")] {
                guard case .host(let parsed, _) = outcome(uri, method: method) else { continue }
                accepted += 1
                XCTAssertEqual(HostName.normalized(parsed), parsed, uri)
                XCTAssertFalse(parsed.contains("%") || parsed.contains("@") || parsed.contains("["), uri)
                XCTAssertFalse(parsed.hasSuffix("."), uri)
            }
        }
        XCTAssertGreaterThan(accepted, 100)
    }
}
