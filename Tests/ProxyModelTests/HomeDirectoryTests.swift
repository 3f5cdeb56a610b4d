import ProxyModel
import XCTest

/// `~` means `$HOME`, as in every shell tool: Foundation's own home lookup ignores it.
final class HomeDirectoryTests: XCTestCase {
    func testHomeComesFromTheEnvironment() {
        XCTAssertEqual(HomeDirectory.path(environment: ["HOME": "/tmp/try home"]), "/tmp/try home")
        XCTAssertEqual(HomeDirectory.path(environment: ["HOME": "/tmp/try/"]), "/tmp/try", "a trailing slash is dropped")
        XCTAssertEqual(HomeDirectory.path(environment: ["HOME": "/"]), "/")
    }

    func testAnUnsetEmptyOrRelativeHomeFallsBackToTheAccount() {
        let account = FileManager.default.homeDirectoryForCurrentUser.path
        XCTAssertEqual(HomeDirectory.path(environment: [:]), account)
        XCTAssertEqual(HomeDirectory.path(environment: ["HOME": ""]), account)
        XCTAssertEqual(HomeDirectory.path(environment: ["HOME": "relative/dir"]), account)
    }

    func testTildeExpansion() {
        let env = ["HOME": "/home/ann"]
        XCTAssertEqual(HomeDirectory.expandingTilde("~", environment: env), "/home/ann")
        XCTAssertEqual(HomeDirectory.expandingTilde("~/exports/a.har", environment: env), "/home/ann/exports/a.har")
        XCTAssertEqual(HomeDirectory.expandingTilde("~bob/x", environment: env), "~bob/x", "another account's ~ is not ours to expand")
        XCTAssertEqual(HomeDirectory.expandingTilde("/abs/~/x", environment: env), "/abs/~/x")
        XCTAssertEqual(HomeDirectory.expandingTilde("rel/x", environment: env), "rel/x")
        XCTAssertEqual(HomeDirectory.expandingTilde("~/x", environment: ["HOME": "/"]), "/x")
    }
}
