import Foundation
import XCTest

/// CONNECT requests the proxy refuses, each with a 400 and a one-line reason before anything
/// is dialled, and the unusual ones it serves (HTTP/1.0, `Content-Length: 0`). Raw sockets:
/// no client library sends these.
final class ConnectTargetTests: XCTestCase {
    /// Sends `request`, expects a 400 whose reason is `reason`, and that the proxy closes.
    private func assertRefused(_ request: String, _ reason: String, proxyPort: Int,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let client = try RawClient(port: proxyPort)
        try client.send(request)
        let response = try client.readResponse(noBody: true)
        XCTAssertEqual(response.status, 400, request, file: file, line: line)
        XCTAssertEqual(response.proxyReason, "bad request: \(reason)\n", request, file: file, line: line)
        XCTAssertEqual(response.header("Connection")?.lowercased(), "close", request, file: file, line: line)
        XCTAssertTrue(try client.readUntilClose(timeout: 10), "open after: \(request)", file: file, line: line)
    }

    /// Malformed targets: user information, percent-encoding, no host, bad ports, IPv6 without
    /// brackets, brackets around a name, a path after the port.
    func testMalformedTargetsAreRefused() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let port = echo.port
            let table: [(String, String)] = [
                ("user@127.0.0.1:\(port)", "CONNECT target 'user@127.0.0.1:\(port)' must be host:port, without user information"),
                ("u:p@localhost:\(port)", "CONNECT target 'u:p@localhost:\(port)' must be host:port, without user information"),
                ("%31%32%37.0.0.1:\(port)", "host '%31%32%37.0.0.1' is percent-encoded: send the host itself"),
                ("local%68ost:\(port)", "host 'local%68ost' is percent-encoded: send the host itself"),
                (":\(port)", "missing host in ':\(port)'"),
                ("127.0.0.1:0", "invalid port '0'"),
                ("127.0.0.1:65536", "invalid port '65536'"),
                ("127.0.0.1:4a3", "invalid port '4a3'"),
                ("127.0.0.1:", "invalid port ''"),
                ("::1:\(port)", "host '::1' has a ':': an IPv6 address goes in brackets, as in [::1]:443"),
                ("[localhost]:\(port)", "'[localhost]' is not an IPv6 address (only IPv6 goes in brackets)"),
                ("127.0.0.1:\(port)/path", "invalid port '\(port)/path'"),
                ("127.0.0.1", "CONNECT target '127.0.0.1' needs a port (host:port)"),
            ]
            for (target, reason) in table {
                try assertRefused("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n", reason, proxyPort: proxy.port)
            }
            XCTAssertEqual(echo.acceptedConnections, 0)
        }
    }

    /// A CONNECT that declares a body is refused and closed: the body never enters a tunnel,
    /// and the target is never dialled.
    func testConnectWithBodyIsRefused() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let head = "CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n"
            try assertRefused(head + "Content-Length: 5\r\n\r\nhello",
                              "a CONNECT request has no body: remove Content-Length", proxyPort: proxy.port)
            try assertRefused(head + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                              "a CONNECT request has no body: remove Transfer-Encoding", proxyPort: proxy.port)
            XCTAssertEqual(echo.acceptedConnections, 0)
            XCTAssertEqual(echo.bytesReceived, 0)
        }
    }

    /// HTTP/1.0 CONNECT and a CONNECT with `Content-Length: 0` open working tunnels.
    func testHTTP10AndZeroLengthConnectWork() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            for (version, extra) in [("HTTP/1.0", ""), ("HTTP/1.1", "Content-Length: 0\r\n")] {
                let client = try RawClient(port: proxy.port)
                try client.send("CONNECT 127.0.0.1:\(echo.port) \(version)\r\n\(extra)\r\n")
                let established = try client.readResponse(noBody: true)
                XCTAssertEqual(established.status, 200, version)
                XCTAssertEqual(established.version, version)
                try client.send("ping")
                XCTAssertEqual(try client.receive(count: 4, timeout: 10), Data("ping".utf8))
            }
        }
    }
}
