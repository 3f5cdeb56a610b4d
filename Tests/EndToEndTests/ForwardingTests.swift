import Foundation
import ProxyModel
import XCTest

/// Plain HTTP/1.1 forwarding with curl as the client: methods, request-line and header
/// rewriting, hop-by-hop removal both ways, HEAD framing.
final class ForwardingTests: XCTestCase {
    /// A GET reaches the origin in origin-form and its body comes back byte for byte.
    func testGetIsForwardedInOriginFormAndBodyRelayed() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/1000?x=1"))
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.body, PatternBytes.data(count: 1000))
            XCTAssertEqual(fetched.header("Content-Length"), "1000")
            let requests = origin.log.requests
            XCTAssertEqual(requests.count, 1)
            XCTAssertEqual(requests.first?.method, "GET")
            XCTAssertEqual(requests.first?.uri, "/bytes/1000?x=1", "the origin must get the origin-form target")
            XCTAssertEqual(requests.first?.version, "HTTP/1.1")
        }
    }

    /// A small POST body reaches the origin and the origin's answer comes back.
    func testPostBodyReachesOrigin() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(
                viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "hello, origin"])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.bodyText, "hello, origin")
            XCTAssertEqual(fetched.header("X-Echo-Method"), "POST")
            XCTAssertEqual(origin.log.requests.first?.bodyLength, 13)
            XCTAssertEqual(origin.log.requests.first?.values(of: "Content-Length"), ["13"])
        }
    }

    /// Other methods with bodies (PUT) and without (DELETE) are forwarded as they are.
    func testPutAndDeleteAreForwarded() async throws {
        try await Fixture.run { proxy, origin in
            let put = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"),
                                           ["-X", "PUT", "--data-binary", "replacement"])
            XCTAssertEqual(put.status, 200, put.result.summary)
            XCTAssertEqual(put.header("X-Echo-Method"), "PUT")
            XCTAssertEqual(put.bodyText, "replacement")
            let delete = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["-X", "DELETE"])
            XCTAssertEqual(delete.status, 200, delete.result.summary)
            XCTAssertEqual(delete.header("X-Echo-Method"), "DELETE")
            XCTAssertEqual(origin.log.requests.map(\.method), ["PUT", "DELETE"])
        }
    }

    /// HEAD gets the headers an equivalent GET would get, and no body.
    func testHeadReturnsHeadersWithoutBody() async throws {
        try await Fixture.run { proxy, origin in
            // With -I curl also writes the headers to -o; -w reports the body bytes it read.
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/5000"),
                                               ["-I", "-w", "%{size_download}"])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.header("Content-Length"), "5000")
            XCTAssertEqual(fetched.result.stdoutText, "0")
            XCTAssertEqual(origin.log.requests.first?.method, "HEAD")
        }
    }

    /// After a HEAD answered with `Content-Length: 5000`, the next response on the same client
    /// connection must start right after the HEAD response's headers: no body bytes in between.
    func testHeadFramingKeepsConnectionInSync() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("HEAD \(origin.url("/bytes/5000")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let head = try client.readResponse(noBody: true)
            XCTAssertEqual(head.status, 200)
            XCTAssertEqual(head.header("Content-Length"), "5000")
            try client.send("GET \(origin.url("/bytes/300")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let get = try client.readResponse()
            XCTAssertEqual(get.status, 200)
            XCTAssertEqual(get.header("X-Origin-URI"), "/bytes/300")
            XCTAssertEqual(get.body, PatternBytes.data(count: 300))
            XCTAssertTrue(client.pending.isEmpty, "unexpected bytes after the GET response")
        }
    }

    /// Hop-by-hop request headers (the fixed list and those named in `Connection`) never reach
    /// the origin; end-to-end headers do. Of `TE`, only `trailers` goes on: the proxy relays
    /// trailers, so it may say so to the next hop (gRPC servers look for it).
    func testHopByHopRequestHeadersAreRemoved() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/headers"), [
                "-H", "Connection: keep-alive, X-Custom-Hop",
                "-H", "X-Custom-Hop: secret",
                "-H", "Keep-Alive: timeout=5",
                "-H", "TE: gzip, trailers;q=0.5",
                "-H", "Trailer: X-Checksum",
                "-H", "Proxy-Authorization: Basic dXNlcjpwYXNz",
                "-H", "X-End-To-End: kept",
            ])
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            guard let request = origin.log.requests.first else { return XCTFail("no request reached the origin") }
            for name in ["Connection", "Proxy-Connection", "Keep-Alive", "Trailer", "Proxy-Authorization",
                         "X-Custom-Hop"] {
                XCTAssertEqual(request.values(of: name), [], "\(name) reached the origin")
            }
            XCTAssertEqual(request.values(of: "TE"), ["trailers"], "the proxy's own TE: trailers only")
            XCTAssertEqual(request.values(of: "X-End-To-End"), ["kept"])
            XCTAssertEqual(request.values(of: "User-Agent").count, 1, "curl's own end-to-end header must be kept")
            XCTAssertTrue(fetched.bodyText.contains("X-End-To-End: kept"))
            // The proxy records what the client sent, hop-by-hop headers included.
            let flow = try proxy.flushedFlows().first
            XCTAssertEqual(flow?.requestHeaders.first(named: "X-Custom-Hop"), "secret")
        }
    }

    /// Hop-by-hop response headers from the origin never reach the client; end-to-end ones do.
    func testHopByHopResponseHeadersAreRemoved() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/hop-response"))
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.bodyText, "ok")
            XCTAssertNil(fetched.header("X-Resp-Hop"))
            XCTAssertNil(fetched.header("Keep-Alive"))
            XCTAssertFalse(fetched.values(of: "Connection").contains { $0.lowercased().contains("x-resp-hop") })
            XCTAssertEqual(fetched.header("X-End-To-End"), "kept")
            XCTAssertEqual(fetched.values(of: "Set-Cookie"), ["a=1; Path=/", "b=2; Path=/"],
                           "duplicate end-to-end headers must be relayed in order")
        }
    }

    /// `Host` is set to the URL's authority, whatever the client put there, and sent once.
    func testHostIsRewrittenToURLAuthority() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/headers"),
                                               ["-H", "Host: wrong.example"])
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(origin.log.requests.first?.values(of: "Host"), [origin.authority])
        }
    }

    /// Userinfo in the request URL is not forwarded: neither in the request line nor in `Host`.
    func testUserinfoIsNotForwarded() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET http://user:secret@\(origin.authority)/headers HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(origin.log.requests.first?.uri, "/headers")
            XCTAssertEqual(origin.log.requests.first?.values(of: "Host"), [origin.authority])
            XCTAssertFalse(response.bodyText.contains("secret"))
        }
    }

    /// A request without any `Host` header (HTTP/1.0 style) still reaches the origin with one.
    func testMissingHostIsAdded() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/headers")) HTTP/1.0\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(origin.log.requests.first?.values(of: "Host"), [origin.authority])
        }
    }
}
