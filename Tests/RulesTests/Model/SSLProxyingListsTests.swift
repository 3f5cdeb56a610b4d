import ProxyCore
@testable import Rules
import RulesTestSupport
import XCTest

/// Which tunnels are decrypted: include by CONNECT host or SNI, exclude by either, exclude wins.
final class SSLProxyingListsTests: XCTestCase {
    private let hosts = RulesTestSupport.hosts

    /// Without lists every tunnel is decrypted.
    func testDefaultDecryptsEverything() {
        let lists = SSLProxyingLists()
        XCTAssertTrue(lists.isDefault)
        XCTAssertTrue(lists.decrypts(connectHost: "a.com", serverName: nil))
        XCTAssertTrue(lists.decrypts(connectHost: "10.0.0.1", serverName: "b.com"))
    }

    /// An exclude list alone leaves everything else decrypted; it matches the CONNECT host or the SNI.
    func testExcludeAlone() {
        let lists = SSLProxyingLists(exclude: hosts("*.apple.com"))
        XCTAssertFalse(lists.isDefault)
        XCTAssertFalse(lists.decrypts(connectHost: "itunes.apple.com", serverName: nil))
        XCTAssertFalse(lists.decrypts(connectHost: "17.1.2.3", serverName: "itunes.apple.com"))
        XCTAssertFalse(lists.decrypts(connectHost: "itunes.apple.com", serverName: "other.com"))
        XCTAssertTrue(lists.decrypts(connectHost: "apple.com", serverName: nil))
        XCTAssertTrue(lists.decrypts(connectHost: "a.com", serverName: "b.com"))
    }

    /// An include list decrypts only what it names, by CONNECT host or by SNI.
    func testIncludeByEitherName() {
        let lists = SSLProxyingLists(include: hosts("api.example.com", "*.test"))
        XCTAssertTrue(lists.decrypts(connectHost: "api.example.com", serverName: nil))
        XCTAssertTrue(lists.decrypts(connectHost: "10.0.0.1", serverName: "api.example.com"))
        XCTAssertTrue(lists.decrypts(connectHost: "x.test", serverName: "unrelated.com"))
        XCTAssertFalse(lists.decrypts(connectHost: "10.0.0.1", serverName: nil))
        XCTAssertFalse(lists.decrypts(connectHost: "www.example.com", serverName: "cdn.example.com"))
    }

    /// A host both included and excluded is not decrypted, whichever name is excluded.
    func testExcludeWins() {
        let lists = SSLProxyingLists(include: hosts("*"), exclude: hosts("bank.com"))
        XCTAssertFalse(lists.decrypts(connectHost: "bank.com", serverName: "bank.com"))
        XCTAssertFalse(lists.decrypts(connectHost: "10.0.0.1", serverName: "bank.com"))
        XCTAssertFalse(lists.decrypts(connectHost: "bank.com", serverName: "cdn.com"))
        XCTAssertTrue(lists.decrypts(connectHost: "cdn.com", serverName: nil))
    }

    /// An empty include list (built in code) decrypts nothing.
    func testEmptyIncludeDecryptsNothing() {
        let lists = SSLProxyingLists(include: HostPatternList([]))
        XCTAssertFalse(lists.isDefault)
        XCTAssertFalse(lists.decrypts(connectHost: "a.com", serverName: "a.com"))
    }
}
