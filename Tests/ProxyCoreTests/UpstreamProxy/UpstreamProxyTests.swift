import ProxyCore
import XCTest

/// `--upstream-proxy` and `upstream_proxy: { url: }`: every URL form a user writes, and every
/// mistake answered with what to write instead — never with the password in the message.
final class UpstreamProxyTests: XCTestCase {
    private func parsed(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> UpstreamProxy? {
        switch UpstreamProxy.parse(text) {
        case .success(let proxy): return proxy
        case .failure(let error):
            XCTFail("'\(text)' refused: \(error.reason)", file: file, line: line)
            return nil
        }
    }

    private func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        switch UpstreamProxy.parse(text) {
        case .success(let proxy):
            XCTFail("'\(text)' accepted as \(proxy)", file: file, line: line)
            return ""
        case .failure(let error): return error.reason
        }
    }

    func testSchemesHostsAndPorts() {
        XCTAssertEqual(parsed("http://proxy.corp:3128"), UpstreamProxy(scheme: .http, host: "proxy.corp", port: 3128))
        XCTAssertEqual(parsed("HTTP://Proxy.Corp:3128/"), UpstreamProxy(scheme: .http, host: "proxy.corp", port: 3128))
        XCTAssertEqual(parsed("socks5://127.0.0.1:1080"), UpstreamProxy(scheme: .socks5, host: "127.0.0.1", port: 1080))
        XCTAssertEqual(parsed("socks5h://[::1]:9050"), UpstreamProxy(scheme: .socks5h, host: "::1", port: 9050))
        XCTAssertEqual(parsed("socks5h://[::1]:9050")?.description, "socks5h://[::1]:9050")
        XCTAssertEqual(parsed("socks5://127.0.0.1:1080")?.resolvesNames, false)
        XCTAssertEqual(parsed("socks5h://127.0.0.1:1080")?.resolvesNames, true)
        XCTAssertEqual(parsed("http://127.0.0.1:1080")?.resolvesNames, true)
    }

    func testLoginIsDecodedAndNeverShown() throws {
        let proxy = try XCTUnwrap(parsed("http://alice:p%40ss%3Aword@proxy.corp:3128"))
        XCTAssertEqual(proxy.user, "alice")
        XCTAssertEqual(proxy.password, "p@ss:word")
        XCTAssertEqual(proxy.description, "http://alice@proxy.corp:3128")
        XCTAssertEqual(proxy.basicAuthorization, "Basic " + Data("alice:p@ss:word".utf8).base64EncodedString())
        // An unencoded '@' in the password: the last '@' ends the login.
        XCTAssertEqual(parsed("socks5://bob:a@b@h:1")?.password, "a@b")
        XCTAssertNil(parsed("socks5://h:1")?.basicAuthorization)
    }

    func testMistakesNameTheFix() {
        XCTAssertTrue(refusal("proxy.corp:3128").contains("has no scheme: write http://HOST:PORT"))
        XCTAssertTrue(refusal("https://proxy.corp:3128").contains("not supported: write http://HOST:PORT"))
        XCTAssertTrue(refusal("socks4://h:1080").contains("write socks5://"))
        XCTAssertTrue(refusal("ftp://h:21").contains("unknown scheme 'ftp://'"))
        XCTAssertTrue(refusal("http://proxy.corp").contains("has no port: write http://proxy.corp:PORT"))
        XCTAssertTrue(refusal("http://[::1]").contains("has no port"))
        XCTAssertTrue(refusal("http://[::1:80").contains("closing ']'"))
        XCTAssertTrue(refusal("http://h:0").contains("is not a port"))
        XCTAssertTrue(refusal("http://h:65536").contains("is not a port"))
        XCTAssertTrue(refusal("http://h:80x").contains("is not a port"))
        XCTAssertTrue(refusal("http://h:80/path").contains("has a path"))
        XCTAssertTrue(refusal("http://bad host:80").contains("is not a host name or IP address"))
        XCTAssertTrue(refusal("http://:80").contains("is not a host name"))
        XCTAssertTrue(refusal("http://user@h:80").contains("has no password"))
        XCTAssertTrue(refusal("http://user:@h:80").contains("password"))
        XCTAssertTrue(refusal("http://u:%ZZ@h:80").contains("%-escape"))
        XCTAssertTrue(refusal("socks5://\(String(repeating: "u", count: 256)):p@h:1").contains("255 bytes"))
    }

    func testRefusalsNeverQuoteThePassword() {
        for text in ["http://alice:s3cret@proxy.corp", "http://alice:s3cret@proxy.corp:99999",
                     "http://alice:s3cret@bad host:1", "http://alice:s3cret@h:1/x"] {
            let reason = refusal(text)
            XCTAssertFalse(reason.contains("s3cret"), reason)
            XCTAssertFalse(reason.isEmpty)
        }
    }

    func testEndlessInputIsCutInMessages() {
        let reason = refusal("http://" + String(repeating: "a", count: 100_000))
        XCTAssertLessThan(reason.count, 300)
    }
}
