import ArgumentParser
import NIOCore
import XCTest
@testable import proxyapp_load

/// URLs and proxy addresses as the load generator takes them apart, the bytes it sends, and
/// the message each bad argument gets.
final class LoadTargetTests: XCTestCase {
    func testURLForms() throws {
        let plain = try XCTUnwrap(LoadTarget(url: "http://127.0.0.1:8080/1k?x=1#frag"))
        XCTAssertEqual(plain, LoadTarget(scheme: .http, host: "127.0.0.1", port: 8080, path: "/1k?x=1"))
        XCTAssertTrue(plain.hostIsIPAddress)
        let named = try XCTUnwrap(LoadTarget(url: "HTTPS://localhost"))
        XCTAssertEqual([named.host, String(named.port), named.path, named.authority], ["localhost", "443", "/", "localhost:443"])
        XCTAssertFalse(named.hostIsIPAddress)
        let v6 = try XCTUnwrap(LoadTarget(url: "https://[::1]:8443?q"))
        XCTAssertEqual([v6.host, v6.path, v6.authority], ["::1", "/?q", "[::1]:8443"])
        for bad in ["ftp://x/", "127.0.0.1:80/", "http://", "http://:80/", "http://h:0/", "http://h:99999/",
                    "http://user@h/", "http://[::1/", "http://h:port/"] {
            XCTAssertNil(LoadTarget(url: bad), bad)
        }
    }

    func testRequestBytes() throws {
        let target = try XCTUnwrap(LoadTarget(url: "http://127.0.0.1:8080/1k"))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 8080)
        let direct = LoadPlan(target: target, connectAddress: address, throughProxy: false, tlsContext: nil,
                              newConnectionPerRequest: false, timeout: .seconds(1))
        XCTAssertEqual(String(buffer: direct.request),
                       "GET /1k HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: proxyapp-load\r\nAccept: */*\r\n\r\n")
        let proxied = LoadPlan(target: target, connectAddress: address, throughProxy: true, tlsContext: nil,
                               newConnectionPerRequest: true, timeout: .seconds(1))
        XCTAssertTrue(String(buffer: proxied.request).hasPrefix("GET http://127.0.0.1:8080/1k HTTP/1.1\r\n"))
        XCTAssertTrue(String(buffer: proxied.request).hasSuffix("Connection: close\r\n\r\n"))
        XCTAssertFalse(proxied.tunnels)
        let secure = try XCTUnwrap(LoadTarget(url: "https://localhost:8443/1k"))
        let tunnelled = LoadPlan(target: secure, connectAddress: address, throughProxy: true, tlsContext: nil,
                                 newConnectionPerRequest: false, timeout: .seconds(1))
        XCTAssertTrue(tunnelled.tunnels)
        XCTAssertEqual(tunnelled.serverHostname, "localhost")
        XCTAssertEqual(String(buffer: tunnelled.connectRequest),
                       "CONNECT localhost:8443 HTTP/1.1\r\nHost: localhost:8443\r\nUser-Agent: proxyapp-load\r\n\r\n")
        XCTAssertTrue(String(buffer: tunnelled.request).hasPrefix("GET /1k HTTP/1.1\r\n"))
    }

    /// `--socks5`: every target is tunnelled (plain HTTP too, in origin form), the greeting
    /// offers "no login" only, and the request names the host as a domain.
    func testSOCKS5Bytes() throws {
        let target = try XCTUnwrap(LoadTarget(url: "http://localhost:8080/1k"))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1080)
        let plan = LoadPlan(target: target, connectAddress: address, throughProxy: true, socks5: true, tlsContext: nil,
                            newConnectionPerRequest: false, timeout: .seconds(1))
        XCTAssertTrue(plan.tunnels)
        XCTAssertTrue(String(buffer: plan.request).hasPrefix("GET /1k HTTP/1.1\r\n"))
        XCTAssertEqual(Array(buffer: plan.socksGreeting), [0x05, 0x01, 0x00])
        XCTAssertEqual(Array(buffer: plan.socksRequest), [0x05, 0x01, 0x00, 0x03, 9] + Array("localhost".utf8) + [0x1F, 0x90])
    }

    func testBadArgumentsNameTheProblem() {
        assertRejected(["--url", "http://127.0.0.1/", "--socks5"], mentioning: "give --proxy HOST:PORT too")
        assertRejected(["--url", "ftp://x/"], mentioning: "--url must be")
        assertRejected(["--url", "http://127.0.0.1/", "--proxy", "nowhere"], mentioning: "--proxy must be HOST:PORT")
        assertRejected(["--url", "https://127.0.0.1/"], mentioning: "needs --cacert FILE")
        assertRejected(["--url", "http://127.0.0.1/", "--connections", "0"], mentioning: "--connections")
        assertRejected(["--url", "http://127.0.0.1/", "--duration", "0"], mentioning: "--duration")
        assertRejected(["--url", "https://127.0.0.1/", "--cacert", "x.pem", "--insecure"], mentioning: "exclude each other")
        XCTAssertNoThrow(try LoadCommand.parse(["--url", "https://127.0.0.1:1/", "--proxy", "http://127.0.0.1:2/",
                                                "--cacert", "ca.pem", "--new-connection-per-request", "--warmup", "0.5"]))
    }

    func testHTTP2ArgumentsNameTheProblem() throws {
        assertRejected(["--url", "http://127.0.0.1/", "--h2"], mentioning: "use an https:// URL")
        assertRejected(["--url", "https://127.0.0.1/", "--insecure", "--streams", "10"], mentioning: "--streams needs --h2")
        assertRejected(["--url", "https://127.0.0.1/", "--insecure", "--h2", "--streams", "0"], mentioning: "--streams must be")
        assertRejected(["--url", "https://127.0.0.1/", "--insecure", "--h2", "--new-connection-per-request"],
                       mentioning: "--new-connection-per-request is for HTTP/1.1")
        let command = try LoadCommand.parse(["--url", "https://localhost:8443/1k", "--insecure", "--h2"])
        let plan = try command.makePlan()
        XCTAssertEqual(plan.http2Streams, 50)
        XCTAssertEqual(plan.http2Request.uri, "/1k")
        XCTAssertEqual(plan.http2Request.headers["host"], ["localhost:8443"])
        XCTAssertNil(try LoadCommand.parse(["--url", "https://localhost:8443/", "--insecure"]).makePlan().http2Streams)
    }

    private func assertRejected(_ arguments: [String], mentioning expected: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try LoadCommand.parse(arguments), file: file, line: line) { error in
            let message = LoadCommand.message(for: error)
            XCTAssertTrue(message.contains(expected), message, file: file, line: line)
        }
    }
}
