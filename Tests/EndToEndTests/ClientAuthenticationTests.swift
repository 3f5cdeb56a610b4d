import Foundation
import ProxyCore
import ProxyEngine
import XCTest

/// `--auth`: every proxied request and CONNECT needs Basic proxy credentials (407 with
/// `Proxy-Authenticate` otherwise), the proxy's own pages never do, the credentials never reach
/// the origin, and the capture keeps `REDACTED` instead of them.
final class ClientAuthenticationTests: XCTestCase {
    private static let password = "s3cret-Pa55:word"

    private func withAuth(_ body: (ProxyHarness, TestOrigin) async throws -> Void) async throws {
        try await Fixture.run({ configuration in
            configuration.access.credentials.add(user: "alice", password: Self.password)
            configuration.access.credentials.add(user: "bob", password: "hunter2")
        }, body)
    }

    /// Sends `text` on one raw connection and reads `responses` responses.
    private static func exchange(port: Int, responses: Int, _ text: String) throws -> [RawResponse] {
        let client = try RawClient(port: port)
        defer { client.close() }
        try client.send(text)
        return try (0..<responses).map { _ in try client.readResponse() }
    }

    func testRequestWithoutCredentialsIsAskedForThem() async throws {
        try await withAuth { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/hello")
            XCTAssertEqual(fetched.status, 407, fetched.result.summary)
            XCTAssertEqual(fetched.header("Proxy-Authenticate"), "Basic realm=\"ProxyApp\", charset=\"UTF-8\"")
            XCTAssertTrue(fetched.bodyText.contains("needs a user name and password"), fetched.bodyText)
            XCTAssertTrue(fetched.header("Proxy-Status")?.contains("http_request_denied") == true)
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    func testRightCredentialsAreServedAndNeverForwardedOrStored() async throws {
        try await withAuth { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/hello",
                                               ["--proxy-user", "alice:\(Self.password)"])
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            let second = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/again",
                                              ["--proxy-user", "bob:hunter2"])
            XCTAssertEqual(second.status, 200, second.result.summary)
            XCTAssertEqual(origin.log.requests.count, 2)
            for request in origin.log.requests {
                XCTAssertNil(request.headers.first(named: "Proxy-Authorization"), "hop-by-hop: never forwarded")
            }
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.map(\.status), [200, 200])
            for flow in flows {
                XCTAssertEqual(flow.requestHeaders.first(named: "Proxy-Authorization"), "REDACTED")
            }
            // Not in the capture file in any form.
            proxy.writer.flush()
            let bytes = try Data(contentsOf: proxy.file("traffic.sqlite"))
            let wal = (try? Data(contentsOf: proxy.file("traffic.sqlite-wal"))) ?? Data()
            for secret in [Self.password, Data("alice:\(Self.password)".utf8).base64EncodedString(), "hunter2"] {
                XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(secret) stored in the capture")
                XCTAssertNil(wal.range(of: Data(secret.utf8)), "\(secret) stored in the WAL")
            }
        }
    }

    func testWrongCredentialsAreRefusedAndNotForwarded() async throws {
        try await withAuth { proxy, origin in
            for user in ["alice:wrong", "alice:\(Self.password.dropLast())", "mallory:\(Self.password)", "ALICE:\(Self.password)"] {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/x", ["--proxy-user", user])
                XCTAssertEqual(fetched.status, 407, "\(user): \(fetched.result.summary)")
                XCTAssertTrue(fetched.bodyText.contains("wrong user name or password"), fetched.bodyText)
            }
            // A POST refused mid-way: its body is drained, and the next request on the same
            // connection (curl reuses it with the right credentials) is served.
            let raw = try Self.exchange(port: proxy.port, responses: 2, [
                "POST http://127.0.0.1:\(origin.port)/up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                    + "Proxy-Authorization: Basic \(Data("alice:nope".utf8).base64EncodedString())\r\n\r\nhello",
                "GET http://127.0.0.1:\(origin.port)/echo/next HTTP/1.1\r\nHost: x\r\n"
                    + "Proxy-Authorization: Basic \(Data("bob:hunter2".utf8).base64EncodedString())\r\nConnection: close\r\n\r\n",
            ].joined())
            XCTAssertEqual(raw.map(\.status), [407, 200])
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/echo/next"])
        }
    }

    /// Odd spellings of the header: two fields, another scheme, junk base64, a huge value.
    func testMalformedCredentialsAreRefused() async throws {
        try await withAuth { proxy, origin in
            let good = "Basic " + Data("bob:hunter2".utf8).base64EncodedString()
            let cases: [(String, String)] = [
                ("Proxy-Authorization: \(good)\r\nProxy-Authorization: \(good)\r\n", "more than one"),
                ("Proxy-Authorization: Bearer abc\r\n", "only Basic"),
                ("Proxy-Authorization: Basic ###\r\n", "not valid base64"),
                ("Proxy-Authorization: Basic \(String(repeating: "A", count: 40_000))\r\n", "not valid base64"),
                ("Authorization: \(good)\r\n", "needs a user name and password"),
            ]
            for (fields, expected) in cases {
                let raw = try Self.exchange(port: proxy.port, responses: 1,
                    "GET http://127.0.0.1:\(origin.port)/ HTTP/1.1\r\nHost: x\r\n\(fields)Connection: close\r\n\r\n")
                XCTAssertEqual(raw.map(\.status), [407])
                XCTAssertTrue(raw.first?.bodyText.contains(expected) == true, "\(fields.prefix(60)): \(raw.first?.bodyText ?? "")")
            }
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    func testConnectNeedsCredentials() async throws {
        try await withAuth { proxy, origin in
            let refused = try await Curl.viaProxy(proxy.port, ["-p", "-o", "/dev/null", "-w", "%{http_connect}",
                                                               "http://127.0.0.1:\(origin.port)/echo/tunnelled"])
            XCTAssertNotEqual(refused.exitCode, 0)
            XCTAssertEqual(refused.stdoutText, "407", refused.summary)
            let served = try await Curl.viaProxy(proxy.port, ["-p", "--proxy-user", "bob:hunter2", "-o", "/dev/null",
                                                              "-w", "%{http_connect} %{http_code}",
                                                              "http://127.0.0.1:\(origin.port)/echo/tunnelled"])
            XCTAssertEqual(served.stdoutText, "200 200", served.summary)
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/echo/tunnelled"])
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.method, "CONNECT")
            XCTAssertEqual(flows.first?.requestHeaders.first(named: "Proxy-Authorization"), "REDACTED")
        }
    }

    /// The proxy's pages are public (a phone opens the CA page before it has a password), in
    /// origin-form, as `http://proxyapp.cert/`, and addressed to the proxy's own host and port.
    func testProxyPagesNeedNoCredentials() async throws {
        try await withAuth { proxy, origin in
            for (arguments, url) in [([String](), "http://127.0.0.1:\(proxy.port)/"),
                                     (["-x", proxy.proxyURL], "http://proxyapp.cert/"),
                                     (["-x", proxy.proxyURL], "http://127.0.0.1:\(proxy.port)/"),
                                     (["-x", proxy.proxyURL], "http://localhost:\(proxy.port)/")] {
                let result = try await Curl.run(arguments + ["-w", "\n%{http_code}", url])
                XCTAssertTrue(result.stdoutText.hasSuffix("\n200"), "\(url): \(result.stdoutText.suffix(200))")
                XCTAssertTrue(result.stdoutText.contains("ProxyApp is running"), url)
            }
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }
}

/// Requests addressed to the proxy's own listen port are its pages, not a loop through itself.
final class OwnEndpointTests: XCTestCase {
    func testAbsoluteFormToTheProxyItselfIsItsPage() async throws {
        try await Fixture.run { proxy, origin in
            for host in ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"] {
                let result = try await Curl.viaProxy(proxy.port, ["-w", "\n%{http_code}", "http://\(host):\(proxy.port)/"])
                XCTAssertTrue(result.stdoutText.hasSuffix("\n200"), "\(host): \(result.stdoutText.suffix(200))")
                XCTAssertTrue(result.stdoutText.contains("ProxyApp is running"), host)
            }
            XCTAssertEqual(try proxy.flushedFlows().count, 0, "no exchange went through the proxy to itself")
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// Several `--listen` addresses: each accepts, the second takes the first one's port when
    /// it asked for port 0.
    func testSeveralListenAddresses() async throws {
        try await Fixture.run({ configuration in
            configuration.additionalListenAddresses = [.init(host: "::1", port: 0)]
        }) { proxy, origin in
            XCTAssertEqual(proxy.listenAddresses.map { $0.port }, [proxy.port, proxy.port])
            for proxyHost in ["127.0.0.1", "[::1]"] {
                let result = try await Curl.run(["-x", "http://\(proxyHost):\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}",
                                                 "http://127.0.0.1:\(origin.port)/echo/via-\(proxyHost)"])
                XCTAssertEqual(result.stdoutText, "200", result.summary)
            }
            XCTAssertEqual(origin.log.requests.count, 2)
        }
    }
}
