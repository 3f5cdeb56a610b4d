import ChildProcess
import Foundation
import TestSupport
import XCTest

/// The shipped binary puts its default data directory under `$HOME`, as a user trying it in a
/// scratch home expects (`HOME=/tmp/try proxyapp`), not under the account's home from the
/// password database.
final class HomeDirectoryEndToEndTests: XCTestCase {
    func testDefaultDataDirectoryFollowsHome() async throws {
        let binary = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                   "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
        let temporary = try TemporaryDirectory("proxyapp-home")
        defer { temporary.remove() }
        let home = temporary.url

        let outcome = try await ChildProcess.run("/usr/bin/env", ["-u", "PROXYAPP_HOME", "HOME=\(home.path)", binary, "ca", "show"],
                                                 timeout: 60)
        XCTAssertEqual(outcome.exitCode, 0, String(decoding: outcome.stderr, as: UTF8.self))
        let ca = home.appendingPathComponent(".proxyapp/ca/ProxyCA.pem").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: ca), "the CA goes to $HOME/.proxyapp")
        XCTAssertTrue((String(decoding: outcome.stdout + outcome.stderr, as: UTF8.self)).contains(ca))
    }
}
