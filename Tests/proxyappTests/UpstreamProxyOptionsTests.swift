import ArgumentParser
import ProxyCore
import ProxyEngine
import XCTest
@testable import proxyapp

/// `--upstream-proxy` and `--upstream-bypass` as typed: the settings they make, the banner line
/// (never the password), and every mistake refused before anything starts.
final class UpstreamProxyOptionsTests: XCTestCase {
    private func assertRefused(_ arguments: [String], mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try RunCommand.parse(arguments), file: file, line: line) { error in
            let message = RunCommand.message(for: error)
            XCTAssertTrue(message.contains(text), "\(arguments): \(message)", file: file, line: line)
            XCTAssertFalse(message.contains("s3cret"), message, file: file, line: line)
            XCTAssertEqual(RunCommand.exitCode(for: error), .validationFailure, file: file, line: line)
        }
    }

    func testSettingsAndBanner() throws {
        let options = try RunCommand.parse(["--upstream-proxy", "http://me:s3cret@proxy.corp:3128",
                                            "--upstream-bypass", "localhost, 127.0.0.1", "--upstream-bypass", "*.corp"]).upstream
        let settings = options.settings
        XCTAssertEqual(settings.proxy, UpstreamProxy(scheme: .http, host: "proxy.corp", port: 3128, user: "me", password: "s3cret"))
        XCTAssertEqual(settings.bypass.patterns.map(\.text), ["localhost", "127.0.0.1", "*.corp"])
        XCTAssertEqual(options.bannerLine, "Upstream proxy: http://me@proxy.corp:3128 (direct: localhost, 127.0.0.1, *.corp)")
        XCTAssertNil(try RunCommand.parse([]).upstream.bannerLine)
        XCTAssertNil(try RunCommand.parse([]).upstream.settings.proxy)
    }

    func testMistakes() {
        assertRefused(["--upstream-proxy", "proxy.corp:3128"], mentioning: "has no scheme")
        assertRefused(["--upstream-proxy", "http://me:s3cret@proxy.corp"], mentioning: "has no port")
        assertRefused(["--upstream-proxy", "socks4://h:1"], mentioning: "write socks5://")
        assertRefused(["--upstream-bypass", "localhost"], mentioning: "give --upstream-proxy URL too")
        assertRefused(["--upstream-proxy", "http://h:1", "--upstream-bypass", "a..b"], mentioning: "--upstream-bypass 'a..b'")
    }
}
