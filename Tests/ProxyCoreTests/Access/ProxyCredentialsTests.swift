import Foundation
import ProxyCore
import XCTest

/// `--auth` entries, and `Proxy-Authorization: Basic` checked against them — including the
/// spellings an attacker would try.
final class ProxyCredentialsTests: XCTestCase {
    private func basic(_ pair: String) -> String { "Basic " + Data(pair.utf8).base64EncodedString() }

    private func credentials() -> ProxyCredentials {
        var credentials = ProxyCredentials()
        credentials.add(user: "alice", password: "s3cret:with:colons")
        credentials.add(user: "bob", password: "pässwörd")
        return credentials
    }

    func testEntriesParse() throws {
        let entry = try ProxyCredentials.parseEntry("alice:a:b").get()
        XCTAssertEqual(entry.user, "alice")
        XCTAssertEqual(entry.password, "a:b")
        let refusals: [(String, String)] = [
            ("alice", "no ':'"), (":pass", "user name before ':' is empty"), ("alice:", "password after 'alice:' is empty"),
            ("al\u{1}ice:x", "control character"), ("a:\n", "control character"),
            (String(repeating: "u", count: 256) + ":p", "255 bytes"),
        ]
        for (text, expected) in refusals {
            switch ProxyCredentials.parseEntry(text) {
            case .success: XCTFail("\(text) accepted")
            case .failure(let error): XCTAssertTrue(error.reason.contains(expected), "\(text.prefix(20)): \(error)")
            }
        }
    }

    func testRightCredentialsAreAccepted() {
        let credentials = credentials()
        XCTAssertEqual(credentials.check(proxyAuthorization: [basic("alice:s3cret:with:colons")]), .accepted(user: "alice"))
        XCTAssertEqual(credentials.check(proxyAuthorization: [basic("bob:pässwörd")]), .accepted(user: "bob"))
        // The scheme is case-insensitive, whitespace around the value is not part of it.
        let encoded = Data("alice:s3cret:with:colons".utf8).base64EncodedString()
        XCTAssertEqual(credentials.check(proxyAuthorization: ["bAsIc   \(encoded) "]), .accepted(user: "alice"))
    }

    func testWrongOrMalformedCredentialsAreRejected() {
        let credentials = credentials()
        XCTAssertEqual(credentials.check(proxyAuthorization: []), .missing)
        let rejected: [([String], String)] = [
            ([basic("alice:wrong")], "wrong user name or password"),
            ([basic("alice:s3cret")], "wrong user name or password"),  // a prefix of the password
            ([basic("alice:s3cret:with:colons ")], "wrong user name or password"),
            ([basic("Alice:s3cret:with:colons")], "wrong user name or password"),  // names are exact
            ([basic("alice")], "no ':'"),
            ([basic("alice:s3cret:with:colons"), basic("alice:s3cret:with:colons")], "more than one"),
            (["Bearer abc"], "only Basic"),
            (["Basic"], "only Basic"),
            (["Basic !!!notbase64"], "not valid base64"),
            (["Basic " + String(repeating: "QUFB", count: 1000)], "not valid base64"),
            ([""], "only Basic"),
            (["Digest username=\"alice\""], "only Basic"),
        ]
        for (values, expected) in rejected {
            guard case .rejected(let reason) = credentials.check(proxyAuthorization: values) else {
                XCTFail("\(values.map { $0.prefix(40) }) was not rejected")
                continue
            }
            XCTAssertTrue(reason.contains(expected), "\(values.map { $0.prefix(40) }): \(reason)")
            XCTAssertFalse(reason.contains("s3cret"), "the reason never repeats a password")
        }
    }

    /// A user name holding the separator cannot borrow another entry's password.
    func testSeparatorIsNotShared() {
        var credentials = ProxyCredentials()
        credentials.add(user: "a", password: "b:c")
        XCTAssertEqual(credentials.check(proxyAuthorization: [basic("a:b:c")]), .accepted(user: "a"))
        XCTAssertNil(credentials.user(name: Array("a:b".utf8), password: Array("c".utf8)))
    }

    func testNoCredentialsAcceptNothing() {
        XCTAssertTrue(ProxyCredentials().isEmpty)
        XCTAssertEqual(ProxyCredentials().check(proxyAuthorization: [basic("a:b")]), .rejected(reason: "wrong user name or password"))
    }
    /// `--auth-file` users: a login for one needs its hash checked (never accepted or refused
    /// here); `--auth` entries still answer at once; anyone else is refused at once.
    func testFileUsersNeedAHashCheck() throws {
        var credentials = credentials()
        let hash = "$2y$04$rh9qr9wdgVAlVW2Xc6t7Cu4Udh.KEb.6aer1JfBpeojXGv/2LjScu"
        credentials.add(user: "phone", bcryptHash: hash)
        XCTAssertEqual(credentials.count, 3)
        guard case .needsHashCheck(let login) = credentials.check(proxyAuthorization: [basic("phone:guess")]) else {
            return XCTFail("no hash check")
        }
        XCTAssertEqual(login.user, "phone")
        XCTAssertEqual(login.hash, hash)
        XCTAssertEqual(login.password, Array("guess".utf8))
        guard case .needsHashCheck(let other) = credentials.login(name: Array("phone".utf8), password: Array("other".utf8))
        else { return XCTFail("no hash check") }
        XCTAssertNotEqual(login.key, other.key, "verdicts are kept per user and password")
        XCTAssertEqual(credentials.check(proxyAuthorization: [basic("alice:s3cret:with:colons")]), .accepted(user: "alice"))
        XCTAssertEqual(credentials.check(proxyAuthorization: [basic("nobody:x")]), .rejected(reason: "wrong user name or password"))
        XCTAssertEqual(credentials.login(name: Array("PHONE".utf8), password: Array("x".utf8)), .rejected)
        var fileOnly = ProxyCredentials()
        XCTAssertTrue(fileOnly.isEmpty)
        fileOnly.add(user: "phone", bcryptHash: hash)
        XCTAssertFalse(fileOnly.isEmpty)
    }
}
