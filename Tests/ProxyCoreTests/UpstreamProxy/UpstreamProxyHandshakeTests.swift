import ProxyCore
import XCTest

/// Transcripts of opening a tunnel through an upstream proxy: what ProxyApp writes, what the
/// proxy answers (whole, byte by byte, with destination bytes behind it, hostile), and the
/// outcome in words.
final class UpstreamProxyHandshakeTests: XCTestCase {
    private func proxy(_ text: String) throws -> UpstreamProxy { try UpstreamProxy.parse(text).get() }

    /// Feeds `answer` one byte at a time; every step before the last must be `needMore`.
    private func feedBytewise(_ handshake: inout UpstreamProxyHandshake, _ answer: [UInt8],
                              file: StaticString = #filePath, line: UInt = #line) -> UpstreamProxyHandshake.Step {
        for (index, byte) in answer.enumerated() {
            let step = handshake.receive([byte])
            if index < answer.count - 1 && step != .needMore {
                return step
            }
            if index == answer.count - 1 { return step }
        }
        return .needMore
    }

    // MARK: HTTP CONNECT

    func testHTTPConnectWithLoginAndLeftover() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("http://al:pw@p:3128"), host: "example.com", port: 443)
        XCTAssertEqual(String(decoding: handshake.start(), as: UTF8.self),
                       "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n"
                       + "Proxy-Authorization: Basic YWw6cHc=\r\n\r\n")
        XCTAssertEqual(handshake.receive(Array("HTTP/1.1 200 Connection established\r\n".utf8)), .needMore)
        XCTAssertEqual(handshake.receive(Array("Via: corp\r\n\r\n220 hi".utf8)),
                       .established(leftover: Array("220 hi".utf8)))
        // Once open, it takes nothing more.
        XCTAssertEqual(handshake.receive([1, 2, 3]), .needMore)
    }

    func testHTTPConnectBytewiseAndIPv6Target() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("http://p:3128"), host: "::1", port: 8443)
        XCTAssertEqual(String(decoding: handshake.start(), as: UTF8.self),
                       "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n")
        XCTAssertEqual(feedBytewise(&handshake, Array("HTTP/1.0 200 OK\r\n\r\n".utf8)), .established(leftover: []))
    }

    func testHTTPRefusalsInWords() throws {
        func outcome(_ url: String, _ answer: String) throws -> UpstreamProxyHandshake.Step {
            var handshake = UpstreamProxyHandshake(proxy: try proxy(url), host: "h", port: 443)
            return handshake.receive(Array(answer.utf8))
        }
        XCTAssertEqual(try outcome("http://p:1", "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"),
                       .failed("asks for a login (407 Proxy Authentication Required): give it in the URL, "
                               + "http://USER:PASS@p:1"))
        XCTAssertEqual(try outcome("http://al:x@p:1", "HTTP/1.1 407 Nope\r\n\r\n"),
                       .failed("refused the login for user 'al' (407 Nope)"))
        XCTAssertEqual(try outcome("http://p:1", "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"),
                       .failed("answered CONNECT h:443 with 403 Forbidden"))
        XCTAssertEqual(try outcome("http://p:1", "HTTP/1.1 502\r\n\r\n"), .failed("answered CONNECT h:443 with 502"))
        XCTAssertEqual(try outcome("http://p:1", "SSH-2.0-OpenSSH\r\n\r\n"),
                       .failed("did not answer CONNECT as an HTTP proxy (it sent 'SSH-2.0-OpenSSH')"))
        // Control bytes from the proxy never reach a message.
        XCTAssertEqual(try outcome("http://p:1", "HTTP/1.1 500 a\u{1B}[2Jb\r\n\r\n"),
                       .failed("answered CONNECT h:443 with 500 a?[2Jb"))
    }

    func testEndlessHTTPAnswerFails() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("http://p:1"), host: "h", port: 443)
        XCTAssertEqual(handshake.receive(Array("HTTP/1.1 200 OK\r\n".utf8)), .needMore)
        var step = UpstreamProxyHandshake.Step.needMore
        for _ in 0..<40 where step == .needMore {
            step = handshake.receive(Array(repeating: UInt8(ascii: "a"), count: 1024))
        }
        XCTAssertEqual(step, .failed("answered CONNECT h:443 with a header section over 16 KiB"))
    }

    // MARK: SOCKS5

    func testSOCKS5NameWithoutLogin() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("socks5h://p:1080"), host: "example.com", port: 443)
        XCTAssertEqual(handshake.start(), [5, 1, 0])
        XCTAssertEqual(handshake.receive([5, 0]),
                       .send([5, 1, 0, 3, 11] + Array("example.com".utf8) + [0x01, 0xBB]))
        let reply: [UInt8] = [5, 0, 0, 1, 10, 0, 0, 1, 0x1F, 0x90]
        var whole = handshake
        XCTAssertEqual(feedBytewise(&handshake, reply), .established(leftover: []))
        XCTAssertEqual(whole.receive(reply + [42]), .established(leftover: [42]))
    }

    func testSOCKS5AddressesAndDomainReply() throws {
        var v4 = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "192.0.2.7", port: 80)
        XCTAssertEqual(v4.receive([5, 0]), .send([5, 1, 0, 1, 192, 0, 2, 7, 0, 80]))
        // A reply naming a domain: its length byte decides where the reply ends.
        XCTAssertEqual(v4.receive([5, 0, 0, 3, 3] + Array("abc".utf8) + [0, 80]), .established(leftover: []))
        var v6 = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "2001:db8::1", port: 443)
        guard case .send(let request) = v6.receive([5, 0]) else { return XCTFail("no CONNECT") }
        XCTAssertEqual(Array(request.prefix(4)), [5, 1, 0, 4])
        XCTAssertEqual(request.count, 4 + 16 + 2)
        XCTAssertEqual(v6.receive([5, 0, 0, 4] + Array(repeating: 0, count: 18)), .established(leftover: []))
    }

    func testSOCKS5Login() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("socks5h://al:pw@p:1080"), host: "h", port: 22)
        XCTAssertEqual(handshake.start(), [5, 2, 0, 2])
        XCTAssertEqual(handshake.receive([5, 2]), .send([1, 2] + Array("al".utf8) + [2] + Array("pw".utf8)))
        XCTAssertEqual(handshake.receive([1, 0]), .send([5, 1, 0, 3, 1, UInt8(ascii: "h"), 0, 22]))
        XCTAssertEqual(handshake.receive([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]), .established(leftover: []))

        var refused = UpstreamProxyHandshake(proxy: try proxy("socks5h://al:pw@p:1080"), host: "h", port: 22)
        _ = refused.receive([5, 2])
        XCTAssertEqual(refused.receive([1, 1]), .failed("refused the login for user 'al'"))
    }

    func testSOCKS5RefusalsInWords() throws {
        var noLogin = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "h", port: 1)
        XCTAssertEqual(noLogin.receive([5, 0xFF]),
                       .failed("accepts none of the login methods offered: give a login in the URL, socks5://USER:PASS@p:1080"))
        var asksLogin = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "h", port: 1)
        XCTAssertEqual(asksLogin.receive([5, 2]), .failed("asks for a login: give it in the URL, socks5://USER:PASS@p:1080"))
        var notSOCKS = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "h", port: 1)
        XCTAssertEqual(notSOCKS.receive(Array("HTTP/1.1 400".utf8)), .failed("did not answer as a SOCKS5 server"))
        var oddMethod = UpstreamProxyHandshake(proxy: try proxy("socks5://p:1080"), host: "h", port: 1)
        XCTAssertEqual(oddMethod.receive([5, 1]), .failed("chose a login method not offered (1)"))
        for (code, words) in [(UInt8(2), "connection not allowed by its rules"), (4, "host unreachable"),
                              (5, "connection refused"), (6, "timed out (TTL expired)"), (99, "failure code 99")] {
            var handshake = UpstreamProxyHandshake(proxy: try proxy("socks5h://p:1080"), host: "h", port: 1)
            _ = handshake.receive([5, 0])
            XCTAssertEqual(handshake.receive([5, code, 0, 1, 0, 0, 0, 0, 0, 0]), .failed("could not open h:1: \(words)"))
        }
        var badType = UpstreamProxyHandshake(proxy: try proxy("socks5h://p:1080"), host: "h", port: 1)
        _ = badType.receive([5, 0])
        XCTAssertEqual(badType.receive([5, 0, 0, 9, 0]), .failed("answered CONNECT with an unknown address type (9)"))
    }

    /// A name too long for SOCKS5's length byte is refused, never cut to another name.
    func testSOCKS5NameTooLong() throws {
        var handshake = UpstreamProxyHandshake(proxy: try proxy("socks5h://p:1080"),
                                               host: String(repeating: "a", count: 300), port: 443)
        XCTAssertEqual(handshake.receive([5, 0]), .failed("cannot be asked for a name of 300 bytes"))
    }
}
