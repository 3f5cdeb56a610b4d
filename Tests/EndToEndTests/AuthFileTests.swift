import ChildProcess
import Foundation
import ProxyCore
import ProxyEngine
import ProxyModel
import XCTest

/// `--auth-file` users (bcrypt entries written by Apache's `htpasswd -B`, Debian apache2-utils)
/// log in over HTTP, CONNECT and SOCKS5 as `--auth` users do: the hash is checked off the event
/// loop while the request waits, its body arriving meanwhile kept and forwarded whole.
final class AuthFileTests: XCTestCase {
    private static let password = "Pa55:w0rd!"

    /// A bcrypt hash of `password` for `user`, from the real htpasswd.
    private func htpasswd(_ user: String, _ password: String) async throws -> String {
        let outcome = try await ChildProcess.run("/usr/bin/htpasswd", ["-nbB", "-C", "5", user, password], timeout: 30)
        XCTAssertEqual(outcome.exitCode, 0, String(decoding: outcome.stderr, as: UTF8.self))
        let line = String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let entries = try PasswordFile.parse(line).get()
        XCTAssertEqual(entries.first?.user, user)
        return try XCTUnwrap(entries.first?.hash)
    }

    func testHTTPLoginsWithABodyWaitingForTheCheck() async throws {
        let hash = try await htpasswd("phone", Self.password)
        try await Fixture.run({ $0.access.credentials.add(user: "phone", bcryptHash: hash) }) { proxy, origin in
            let body = String(repeating: "0123456789abcdef", count: 20_000)  // 320 KB: read while the hash is checked
            let bodyFile = proxy.directory.appendingPathComponent("body.txt")
            try Data(body.utf8).write(to: bodyFile)
            for round in 0..<2 {  // the second time the verdict is remembered
                let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/\(round)",
                                                   ["--proxy-user", "phone:\(Self.password)", "--data-binary", "@\(bodyFile.path)"])
                XCTAssertEqual(fetched.status, 200, fetched.result.summary)
                XCTAssertEqual(fetched.body.count, body.utf8.count)
                XCTAssertEqual(fetched.bodyText, body)
            }
            for wrong in ["phone:Pa55:w0rd", "phone:", "nobody:\(Self.password)"] {
                let refused = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/no",
                                                   ["--proxy-user", wrong, "--data-binary", "secret"])
                XCTAssertEqual(refused.status, 407, "\(wrong): \(refused.result.summary)")
                XCTAssertTrue(refused.bodyText.contains("wrong user name or password"), refused.bodyText)
            }
            XCTAssertEqual(origin.log.requests.count, 2, "refused requests reach nothing")
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertTrue(flows.allSatisfy { $0.requestHeaders.first(named: "Proxy-Authorization") == nil
                || $0.requestHeaders.first(named: "Proxy-Authorization") == "REDACTED" })
        }
    }

    func testConnectAndSOCKS5Logins() async throws {
        let hash = try await htpasswd("phone", Self.password)
        try await InterceptingFixture.run(configure: { $0.access.credentials.add(user: "phone", bcryptHash: hash) }) { fixture in
            let ca = ["--cacert", fixture.tls.proxyCAFile.path]
            let connect = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/c"),
                                               ca + ["--proxy-user", "phone:\(Self.password)", "--data-binary", "c"])
            XCTAssertEqual(connect.status, 200, connect.result.summary)
            XCTAssertEqual(connect.bodyText, "c")
            let encoded = Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let socks = try await Curl.fetch(proxy: "socks5h://phone:\(encoded)@127.0.0.1:\(fixture.proxy.port)",
                                             fixture.tlsURL("/echo/s"), ca + ["--data-binary", "s"])
            XCTAssertEqual(socks.status, 200, socks.result.summary)
            XCTAssertEqual(socks.bodyText, "s")
            let wrong = try await Curl.run(["-x", "socks5h://phone:nope@127.0.0.1:\(fixture.proxy.port)",
                                            "http://127.0.0.1:\(fixture.origin.port)/echo/x"])
            XCTAssertNotEqual(wrong.exitCode, 0, wrong.summary)
            XCTAssertEqual(fixture.origin.log.requests.count, 0)
        }
    }
}
