import Foundation
import ProxyEngine
import ProxyModel
import XCTest

/// `--reverse LISTEN=URL`: a listener that is the origin for clients that cannot be given a
/// proxy. curl asks it as it would the origin; the request reaches the origin (plain or over
/// TLS) with the origin's `Host`, and is captured, under the origin's name, beside the proxy
/// port's traffic.
final class ReverseModeTests: XCTestCase {
    private func mapping(_ scheme: String, _ host: String, _ port: Int) -> ReverseMapping {
        ReverseMapping(listen: .init(host: "127.0.0.1", port: 0), scheme: scheme, host: host, port: port)
    }

    func testPlainAndTLSOriginsBehindReverseListeners() async throws {
        try await InterceptingFixture.run(configureWithOrigins: { configuration, origin, tlsOrigin in
            configuration.reverse = [self.mapping("http", "127.0.0.1", origin), self.mapping("https", "localhost", tlsOrigin)]
        }) { fixture in
            let ports = fixture.proxy.reversePorts
            XCTAssertEqual(ports.count, 2)
            for (index, port) in ports.enumerated() {
                let fetched = try await Curl.run(["-o", "-", "--data-binary", "to the origin \(index)",
                                                  "http://127.0.0.1:\(port)/echo/reverse\(index)?x=1"])
                XCTAssertEqual(fetched.exitCode, 0, fetched.summary)
                XCTAssertEqual(fetched.stdoutText, "to the origin \(index)")
            }
            let plain = try XCTUnwrap(fixture.origin.log.requests.last)
            XCTAssertEqual(plain.uri, "/echo/reverse0?x=1")
            XCTAssertEqual(plain.values(of: "Host"), ["127.0.0.1:\(fixture.origin.port)"])
            let secure = try XCTUnwrap(fixture.tlsOrigin.log.requests.last)
            XCTAssertEqual(secure.uri, "/echo/reverse1?x=1")
            XCTAssertEqual(secure.values(of: "Host"), ["localhost:\(fixture.tlsOrigin.port)"])
            // The proxy port still proxies, beside them.
            let proxied = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://127.0.0.1:\(fixture.origin.port)/echo/p",
                                               ["--data-binary", "p"])
            XCTAssertEqual(proxied.status, 200, proxied.result.summary)
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            let reversed = try XCTUnwrap(flows.first { $0.path == "/echo/reverse1?x=1" })
            XCTAssertEqual(reversed.scheme, "https")
            XCTAssertEqual(reversed.host, "localhost")
            XCTAssertEqual(reversed.port, fixture.tlsOrigin.port)
            XCTAssertEqual(reversed.status, 200)
            // CONNECT is the proxy port's business; a SOCKS greeting is not HTTP.
            let connect = try await Curl.run(["-p", "-x", "http://127.0.0.1:\(ports[0])", "https://localhost:1/"])
            XCTAssertNotEqual(connect.exitCode, 0)
            XCTAssertTrue(connect.stderr.contains("501"), connect.stderr)
            let socks = try await Curl.run(["-x", "socks5h://127.0.0.1:\(ports[0])", "http://example.invalid/"])
            XCTAssertNotEqual(socks.exitCode, 0, socks.summary)
        }
    }
    /// `--reverse-tls`: the listener speaks TLS with a leaf for the origin's name, which a client
    /// trusting the root CA accepts; the exchange is captured as https.
    func testTLSListener() async throws {
        try await InterceptingFixture.run(configureWithOrigins: { configuration, _, tlsOrigin in
            configuration.reverse = [ReverseMapping(listen: .init(host: "127.0.0.1", port: 0), scheme: "https",
                                                    host: "localhost", port: tlsOrigin, tls: true)]
        }) { fixture in
            let port = try XCTUnwrap(fixture.proxy.reversePorts.first)
            let fetched = try await Curl.run(["-o", "-", "--cacert", fixture.tls.proxyCAFile.path,
                                              "--resolve", "localhost:\(port):127.0.0.1", "--data-binary", "over tls",
                                              "https://localhost:\(port)/echo/tls"])
            XCTAssertEqual(fetched.exitCode, 0, fetched.summary)
            XCTAssertEqual(fetched.stdoutText, "over tls")
            // Without the root CA the certificate is not trusted.
            let untrusted = try await Curl.run(["--resolve", "localhost:\(port):127.0.0.1", "https://localhost:\(port)/"])
            XCTAssertNotEqual(untrusted.exitCode, 0)
            let flow = try await fixture.proxy.waitForFlows(count: 1).first { $0.path == "/echo/tls" }
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertEqual(flow?.status, 200)
        }
    }
}
