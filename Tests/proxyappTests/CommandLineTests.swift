import ArgumentParser
import Foundation
import CaptureStore
import Logging
import TestSupport
import XCTest
@testable import proxyapp

/// The CLI's own inputs: addresses, sizes, limits, and the message each bad one gets.
final class CommandLineTests: XCTestCase {
    /// `--listen`: HOST:PORT, a host name alone (port 8080), `:PORT` and `PORT` (loopback).
    func testListenAddressForms() throws {
        let v4 = try ListenAddress.parse("127.0.0.1:9090")
        XCTAssertEqual([v4.host, String(v4.port)], ["127.0.0.1", "9090"])
        XCTAssertTrue(v4.isLoopback)
        let v6 = try ListenAddress.parse("[::1]:8080")
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.description, "[::1]:8080")
        XCTAssertTrue(v6.isLoopback)
        XCTAssertFalse(try ListenAddress.parse("0.0.0.0:8080").isLoopback)
        let forms = ["7000": "127.0.0.1:7000", ":9090": "127.0.0.1:9090", "localhost": "localhost:8080",
                     "LocalHost:0": "LocalHost:0", "my-box.lan:8081": "my-box.lan:8081", "0.0.0.0": "0.0.0.0:8080",
                     "[::1]": "[::1]:8080", "[fe80::1]:1": "[fe80::1]:1", "0": "127.0.0.1:0"]
        for (argument, expected) in forms {
            XCTAssertEqual(try ListenAddress.parse(argument).description, expected, argument)
        }
        XCTAssertTrue(try ListenAddress.parse("localhost").isLoopback)
        XCTAssertTrue(try ListenAddress.parse("LOCALHOST:1").isLoopback)
        XCTAssertFalse(try ListenAddress.parse("my-box.lan").isLoopback)
        XCTAssertEqual(try RunCommand.parse(["--listen", "localhost"]).network.listenAddresses.map(\.description), ["localhost:8080"])
        XCTAssertEqual(try RunCommand.parse([]).network.listenAddresses.map(\.description), ["127.0.0.1:8080"])
    }

    /// Every refused `--listen` says what is wrong and the forms that work, exit 64 (a usage error).
    func testListenAddressRefusalsSayWhy() {
        let refusals = [
            "": "no address given", ":": "no port after ':'", "127.0.0.1:": "no port after ':'",
            "127.0.0.1:70000": "'70000' is not a port number from 0 to 65535",
            "host:port": "'port' is not a port number", "h:+80": "'+80' is not a port number",
            "h:99999999999999999999999": "is not a port number", "[::1": "'[' without its ']'",
            "[::1]8080": "expected ':' and a port after ']'", "[nonsense]:80": "'nonsense' in brackets is not an IPv6 address",
            "[127.0.0.1]:80": "in brackets is not an IPv6 address", "::1": "an IPv6 address needs brackets: [::1]:8080",
            "under score!": "'under score!' is not a host name or an IP address", "127.1:80": "'127.1' is not a host name",
            "*.example:80": "is not a host name", "a..b": "'a..b' is not a host name",
        ]
        for (argument, reason) in refusals {
            assertRejected(["--listen", argument], mentioning: reason)
            assertRejected(["--listen", argument], mentioning: "Write HOST:PORT, HOST, :PORT or PORT")
            XCTAssertThrowsError(try RunCommand.parse(["--listen", argument])) { error in
                XCTAssertEqual(RunCommand.exitCode(for: error), .validationFailure, argument)
            }
        }
        assertRejected(["--listen", String(repeating: "a", count: 300)], mentioning: "is not a host name or an IP address")
    }

    func testByteCounts() {
        XCTAssertEqual(ByteCount(argument: "16MiB")?.bytes, 16 << 20)
        XCTAssertEqual(ByteCount(argument: "512k")?.bytes, 512 << 10)
        XCTAssertEqual(ByteCount(argument: "1024")?.bytes, 1024)
        XCTAssertEqual(ByteCount(argument: "2G")?.bytes, 2 << 30)
        XCTAssertNil(ByteCount(argument: "lots"))
        XCTAssertNil(ByteCount(argument: "5 parsecs"))
        XCTAssertEqual(ByteCount.format(1536), "1.5 KiB")
    }

    /// Bad flags are refused before anything starts, with a message naming the flag.
    func testRunRejectsBadFlags() {
        assertRejected(["--max-body-size", "1g"], mentioning: "--max-body-size must be at most 512MiB")
        assertRejected(["--idle-timeout", "0"], mentioning: "--idle-timeout must be a positive number")
        assertRejected(["--dns-timeout", "0"], mentioning: "--dns-timeout must be a positive number")
        assertRejected(["--listen", "non sense"], mentioning: "--listen")
        XCTAssertNoThrow(try RunCommand.parse(["--listen", "127.0.0.1:0", "--max-body-size", "512MiB"]))
    }

    /// `--dns-server`: IP addresses with an optional port (53 by default), repeatable; names,
    /// other IPv4 spellings, ports out of range and junk are refused naming the flag and a form.
    func testDNSServerFlag() throws {
        let parsed = try RunCommand.parse(["--dns-server", "192.0.2.53", "--dns-server", "127.0.0.1:5353",
                                           "--dns-server", "2001:db8::53", "--dns-server", "[::1]:5300", "--dns-server", "[::1]"])
        XCTAssertEqual(parsed.dnsServers.map { "\($0.ipAddress ?? "?") \($0.port ?? 0)" },
                       ["192.0.2.53 53", "127.0.0.1 5353", "2001:db8::53 53", "::1 5300", "::1 53"])
        XCTAssertEqual(try RunCommand.parse([]).dnsServers, [])
        for bad in ["dns.example", "127.1", "0x7f.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:", "[::1]:",
                    "[::1", "::1]:53", "1.2.3.4:53:53", "", "127.0.0.1 ", "[fe80::1%eth0]:53"] {
            assertRejected(["--dns-server", bad],
                           mentioning: "'\(bad)' is invalid for '--dns-server <address>': not an IP address with an optional port")
        }
    }

    /// `--max-connections`: a positive count, absent by default (derived from the open-file limit).
    func testMaxConnectionsFlag() throws {
        for bad in ["0", "-5", "1073741825", "99999999999999999999", "many", "1e3"] {
            assertRejected(["--max-connections", bad], mentioning: "--max-connections")
        }
        XCTAssertEqual(try RunCommand.parse(["--max-connections", "1"]).maxConnections, 1)
        XCTAssertEqual(try RunCommand.parse(["--max-connections", "1073741824"]).maxConnections, 1 << 30)
        XCTAssertNil(try RunCommand.parse([]).maxConnections)
    }

    /// The HTTPS options: a missing --upstream-ca file and contradictory flags are refused up front.
    func testRunRejectsBadHTTPSFlags() throws {
        assertRejected(["--upstream-ca", "/nonexistent/ca.pem"], mentioning: "--upstream-ca /nonexistent/ca.pem: no readable file")
        assertRejected(["--no-intercept", "--insecure-upstream"], mentioning: "drop --no-intercept")
        assertRejected(["--pin-ttl", "soon"], mentioning: "--pin-ttl")
        let parsed = try RunCommand.parse(["--pin-ttl", "12h", "--insecure-upstream"])
        XCTAssertEqual(parsed.https.pinTTL.seconds, 12 * 3600)
        XCTAssertTrue(parsed.https.insecureUpstream)
        XCTAssertFalse(try RunCommand.parse([]).https.noIntercept, "interception is on by default")
        assertRejected(["--no-intercept", "--no-http2"], mentioning: "--no-http2 only apply with interception: drop --no-intercept")
        XCTAssertFalse(try RunCommand.parse([]).https.noHTTP2, "HTTP/2 is offered by default")
        XCTAssertTrue(try RunCommand.parse(["--no-http2"]).https.noHTTP2)
        XCTAssertEqual(try RunCommand.parse([]).https.originHTTP2, .client, "origins see the client's protocol by default")
        XCTAssertEqual(try RunCommand.parse(["--origin-http2", "always"]).https.originHTTP2, .always)
        assertRejected(["--origin-http2", "sometimes"], mentioning: "one of 'client' and 'always'")
        assertRejected(["--origin-http2", "always", "--no-http2"], mentioning: "--no-http2 rules out: drop one of them")
        assertRejected(["--origin-http2", "always", "--no-intercept"], mentioning: "--no-intercept rules out")
    }

    /// `--client-tls-min` / `--upstream-tls-min` take 1.0 … 1.3 (default 1.2 on both legs); other
    /// spellings are refused listing the valid values, as is either flag with --no-intercept.
    /// Lowering a leg below 1.2 puts a warning in the banner.
    func testRunTLSMinimumFlags() throws {
        let parsed = try RunCommand.parse(["--client-tls-min", "1.0", "--upstream-tls-min", "1.3"])
        XCTAssertEqual(parsed.https.clientTLSMin, .tls10)
        XCTAssertEqual(parsed.https.upstreamTLSMin, .tls13)
        XCTAssertNil(try RunCommand.parse([]).https.clientTLSMin)
        for bad in ["1.4", "TLSv1.2", "1", ""] {
            assertRejected(["--client-tls-min", bad], mentioning: "'1.0', '1.1', '1.2'")
            assertRejected(["--upstream-tls-min", bad], mentioning: "--upstream-tls-min")
        }
        assertRejected(["--no-intercept", "--client-tls-min", "1.0"], mentioning: "drop --no-intercept")
        assertRejected(["--no-intercept", "--upstream-tls-min", "1.3"], mentioning: "drop --no-intercept")
        XCTAssertEqual(HTTPSOptions.legacyVersionWarnings(client: .tls12, upstream: .tls13), "")
        let warnings = HTTPSOptions.legacyVersionWarnings(client: .tls11, upstream: .tls10)
        XCTAssertTrue(warnings.contains("warning: --client-tls-min 1.1: clients on TLS 1.1 are decrypted"), warnings)
        XCTAssertTrue(warnings.contains("warning: --upstream-tls-min 1.0: origins on TLS 1.0 are accepted"), warnings)
    }

    /// The pin bounds and the first-bytes wait: defaults, forms, and the message for a bad one.
    func testPinBoundsAndFirstBytesTimeout() throws {
        let defaults = try RunCommand.parse([]).https
        XCTAssertEqual([defaults.maxPins, defaults.pinRate, defaults.firstBytesTimeout.seconds], [1000, 10, 30])
        let parsed = try RunCommand.parse(["--max-pins", "50", "--pin-rate", "3", "--first-bytes-timeout", "2m"]).https
        XCTAssertEqual([parsed.maxPins, parsed.pinRate, parsed.firstBytesTimeout.seconds], [50, 3, 120])
        assertRejected(["--max-pins", "0"], mentioning: "--max-pins 0: must be at least 1")
        assertRejected(["--pin-rate", "-1"], mentioning: "--pin-rate")
        assertRejected(["--first-bytes-timeout", "0"], mentioning: "--first-bytes-timeout")
    }

    /// A first run creates the CA and the interception setup; a damaged CA key stops the start
    /// with a message naming the file and the fix.
    func testHTTPSSetupCreatesTheCAAndReportsADamagedOne() throws {
        let directory = try makeTemporaryDirectory().url
        let command = try RunCommand.parse(["--data-dir", directory.path])
        let repository = TrafficRepository(database: try TrafficDatabase(path: command.data.databasePath))
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let setup = try XCTUnwrap(try command.https.makeSetup(data: command.data, pins: repository, logger: logger))
        XCTAssertTrue(setup.banner.contains("created now"), setup.banner)
        XCTAssertEqual(setup.rootCertificate.pem, try String(contentsOfFile: command.data.certificateAuthorityStore.certificatePEMPath, encoding: .utf8))
        let again = try XCTUnwrap(try command.https.makeSetup(data: command.data, pins: repository, logger: logger))
        XCTAssertTrue(again.banner.contains("reused"), again.banner)
        XCTAssertEqual(again.rootCertificate.der, setup.rootCertificate.der)

        try "garbage".write(toFile: command.data.certificateAuthorityStore.privateKeyPath, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try command.https.makeSetup(data: command.data, pins: repository, logger: logger)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("ProxyCA-key.pem"), text)
            XCTAssertTrue(text.contains("proxyapp ca regenerate"), text)
        }
    }

    /// An --upstream-ca file that exists but holds no certificate stops the start with a message
    /// naming the flag and what it needs.
    func testUpstreamCAThatIsNotPEMIsAClearError() throws {
        let directory = try makeTemporaryDirectory().url
        let garbage = directory.appendingPathComponent("not-a-ca.pem")
        try "hello, not a certificate\n".write(to: garbage, atomically: true, encoding: .utf8)
        let command = try RunCommand.parse(["--data-dir", directory.path, "--upstream-ca", garbage.path])
        let repository = TrafficRepository(database: try TrafficDatabase(path: command.data.databasePath))
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        XCTAssertThrowsError(try command.https.makeSetup(data: command.data, pins: repository, logger: logger)) {
            let text = "\($0)"
            XCTAssertTrue(text.contains("cannot use --upstream-ca \(garbage.path)"), text)
            XCTAssertTrue(text.contains("Pass a PEM file of CA certificates"), text)
        }
    }

    /// `flows` on a directory without a capture says where it looked and what to do.
    func testFlowsWithoutDatabaseNamesTheFix() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-cli-\(UUID())")
        let command = try FlowsCommand.parse(["--data-dir", directory.path])
        XCTAssertThrowsError(try command.run()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("no capture database at \(directory.path)/traffic.sqlite"), text)
            XCTAssertTrue(text.contains("proxyapp run"), text)
        }
    }

    private func assertRejected(_ arguments: [String], mentioning expected: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try RunCommand.parse(arguments), file: file, line: line) { error in
            let message = RunCommand.message(for: error)
            XCTAssertTrue(message.contains(expected), message, file: file, line: line)
        }
    }
}
