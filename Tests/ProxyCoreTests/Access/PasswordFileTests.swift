import ProxyCore
import XCTest

/// `--auth-file`: htpasswd lines with bcrypt hashes are read; every other kind of line is
/// refused by number with the command that makes a good one.
final class PasswordFileTests: XCTestCase {
    private let phone = "$2y$04$rh9qr9wdgVAlVW2Xc6t7Cu4Udh.KEb.6aer1JfBpeojXGv/2LjScu"
    private let laptop = "$2b$04$abcdefghijklmnopqrstuujydOTSfIH/d5oUHpsygqV5X9xJLQc6e"

    private func problem(_ text: String) -> String {
        switch PasswordFile.parse(text) {
        case .success(let entries):
            XCTFail("accepted: \(entries)")
            return ""
        case .failure(let problem): return problem.description
        }
    }

    func testReadsUsersSkippingCommentsAndBlankLines() throws {
        let text = "# devices\r\nphone:\(phone)\r\n\n   \n  # laptop below\nlaptop:\(laptop)  \n"
        let entries = try PasswordFile.parse(text).get()
        XCTAssertEqual(entries.map(\.user), ["phone", "laptop"])
        XCTAssertEqual(entries.map(\.hash), [phone, laptop])
        XCTAssertEqual(entries.map(\.line), [2, 6])
    }

    func testWeakAndMalformedEntriesAreRefusedByLine() {
        XCTAssertEqual(problem("a:$apr1$xyz$abcdefghijklmnopqrstuv"),
                       "line 1: user 'a' has an MD5 ($apr1$) hash, which is weak: make a bcrypt entry with: htpasswd -B FILE a")
        XCTAssertEqual(problem("# x\nb:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="),
                       "line 2: user 'b' has a SHA-1 ({SHA}) hash, which is weak: make a bcrypt entry with: htpasswd -B FILE b")
        XCTAssertEqual(problem("c:plaintext"),
                       "line 1: user 'c' has no bcrypt hash (only $2y$/$2b$ entries are accepted): make a bcrypt entry with: htpasswd -B FILE c")
        XCTAssertTrue(problem("d:" + phone.dropLast()).contains("has no bcrypt hash"))
        XCTAssertTrue(problem("d:" + phone.replacingOccurrences(of: "$2y$", with: "$2x$")).contains("has no bcrypt hash"))
        XCTAssertTrue(problem("d:" + phone.dropLast() + "!").contains("has no bcrypt hash"))
        XCTAssertEqual(problem("e:" + phone.replacingOccurrences(of: "$04$", with: "$17$")),
                       "line 1: user 'e' has bcrypt cost 17; use 4 to 16 (each login is checked at that cost): htpasswd -B -C 10 FILE e")
        XCTAssertTrue(problem("e:" + phone.replacingOccurrences(of: "$04$", with: "$03$")).contains("cost 3"))
        XCTAssertEqual(problem("no colon here"), "line 1: no ':' between user name and hash (htpasswd writes USER:HASH)")
        XCTAssertTrue(problem(":\(phone)").contains("the user name is empty"))
        XCTAssertTrue(problem("a\u{1B}b:\(phone)").contains("control character"))
        XCTAssertEqual(problem("p:\(phone)\nq:\(laptop)\np:\(laptop)"), "line 3: user 'p' is also on line 1: keep one")
        XCTAssertEqual(problem("# only comments\n\n"), "the file has no users: add one with htpasswd -B FILE USER")
        XCTAssertEqual(problem(String(repeating: "#", count: PasswordFile.maximumBytes + 1)),
                       "the file is larger than 1 MiB: is it an htpasswd file?")
    }
}
