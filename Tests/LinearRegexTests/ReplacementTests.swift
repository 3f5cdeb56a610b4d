import Foundation
import LinearRegex
import XCTest

/// Global replacement with `$1` templates: the template syntax the rules file documented with
/// `NSRegularExpression`, its handling of empty matches (checked against it), and hostile input.
final class ReplacementTests: XCTestCase {
    private func replace(_ pattern: String, _ template: String, in text: String) throws -> String {
        let regex = try LinearRegex(pattern)
        return regex.replacingMatches(in: text, with: try ReplacementTemplate(template, groupCount: regex.groupCount))
    }

    /// `$N` inserts a group, `$0` the match, `\` takes the next character literally, a `$` before
    /// anything but a digit is itself; digits after `$` are taken while they still name a group.
    func testTemplateSyntax() throws {
        XCTAssertEqual(try replace("(a)(b)", "$2$1", in: "xaby"), "xbay")
        XCTAssertEqual(try replace("(a)", "<$0$0>", in: "xay"), "x<aa>y")
        XCTAssertEqual(try replace("(a)", "\\$1", in: "xay"), "x$1y")
        XCTAssertEqual(try replace("(a)", "\\\\", in: "xay"), "x\\y")
        XCTAssertEqual(try replace("(a)", "$x$", in: "xay"), "x$x$y")
        XCTAssertEqual(try replace("(a)", "q\\", in: "xay"), "xq\\y", "a trailing backslash is itself")
        XCTAssertEqual(try replace("(a)", "$12", in: "xay"), "xa2y", "one group: $1 then 2")
        let twelve = String(repeating: "(.)", count: 12)
        XCTAssertEqual(try replace(twelve, "$12", in: "abcdefghijkl"), "l")
        XCTAssertEqual(try replace("(a)|b", "[$1]", in: "ab"), "[a][]", "a group that took no part is empty")
        XCTAssertEqual(try replace("é(.)", "E$1", in: "café au lait: éte"), "cafE au lait: Ete")
    }

    /// A `$N` past the regex's groups is refused, at the `$`, saying how to write a `$`.
    func testMissingGroupIsRefused() {
        XCTAssertThrowsError(try ReplacementTemplate("ok $3", groupCount: 2)) { error in
            let error = error as? LinearRegexError
            XCTAssertEqual(error?.reason, "$3 names group 3, but the regex has 2 groups (write \\$ for a $)")
            XCTAssertEqual(error?.characterOffset, 3)
        }
        XCTAssertThrowsError(try ReplacementTemplate("$1", groupCount: 0))
        XCTAssertNoThrow(try ReplacementTemplate("$0 \\$9", groupCount: 0))
    }

    /// Empty matches: after one the search moves on a whole character (never splitting UTF-8),
    /// and one right after a non-empty match counts, as in `NSRegularExpression`.
    func testEmptyMatches() throws {
        XCTAssertEqual(try replace("a*", "-", in: "baaac"), "-b--c-")
        XCTAssertEqual(try replace("", "-", in: "abc"), "-a-b-c-")
        XCTAssertEqual(try replace("x*", "-", in: "üé😀"), "-ü-é-😀-")
        XCTAssertEqual(try replace("", "-", in: ""), "-")
        XCTAssertEqual(try replace("^", ">", in: "ab"), ">ab")
        XCTAssertEqual(try replace("$", "<", in: "ab"), "ab<")
        XCTAssertEqual(try replace("\\b", "|", in: "ab cd"), "|ab| |cd|")
    }

    /// Nothing matched: the text comes back as it was.
    func testNoMatch() throws {
        let regex = try LinearRegex("z")
        let template = try ReplacementTemplate("y", groupCount: 0)
        XCTAssertEqual(regex.replacingMatches(in: "abc", with: template), "abc")
        XCTAssertNil(Array("abc".utf8).withUnsafeBufferPointer { regex.replacingMatches(utf8: $0, with: template) })
    }

    /// The same answers as `NSRegularExpression` (the engine the rules file used before) for
    /// patterns both read alike, over ASCII and non-ASCII text.
    func testAgreesWithNSRegularExpression() throws {
        let patterns = ["\\d+", "(\\w+)@(\\w+)", "a*", "(a)|b", "[aeiou]", "^", "x?", "(?i)HELLO", "é+", "(.)(.)", "\\s+$"]
        let templates = ["#", "<$0>", "$1", "[$2$1]", "\\$", ""]
        let texts = ["", "a", "bob@example and ann@test", "hello HELLO hElLo 123 45", "aaa baaa", "café ééé naïve",
                     "x yy   ", "😀a😀b"]
        for pattern in patterns {
            let regex = try LinearRegex(pattern)
            let reference = try NSRegularExpression(pattern: pattern)
            for template in templates {
                guard let parsed = try? ReplacementTemplate(template, groupCount: regex.groupCount) else { continue }
                for text in texts {
                    let expected = reference.stringByReplacingMatches(
                        in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
                    XCTAssertEqual(regex.replacingMatches(in: text, with: parsed), expected,
                                   "\(pattern) → \(template) in '\(text)'")
                }
            }
        }
    }

    /// A replacement over 100 KB of the input that makes a backtracking engine explode answers
    /// at once, and right.
    func testCatastrophicPatternsInReplacement() throws {
        let run = String(repeating: "a", count: 100_000)
        XCTAssertEqual(try replace("(a+)+$", "X", in: run + "b"), run + "b")
        XCTAssertEqual(try replace("(a+)+$", "X", in: run), "X")
        XCTAssertEqual(try replace("(x+x+)+y", "Y", in: String(repeating: "x", count: 100_000)),
                       String(repeating: "x", count: 100_000))
        let words = String(repeating: "word ", count: 20_000)
        XCTAssertEqual(try replace("^(\\w+\\s?)*$", "W", in: words + "!"), words + "!")
        XCTAssertEqual(try replace("(a)", "$1$1", in: run).utf8.count, 200_000, "100,000 matches, each replaced")
    }

    /// `b+c|b` over a run of b reads to the end for every one-byte match (quadratic in all):
    /// `shouldContinue` is asked before each search after the first and stops it.
    func testShouldContinueStopsAQuadraticReplacement() throws {
        let regex = try LinearRegex("b+c|b")
        let template = try ReplacementTemplate("x", groupCount: 0)
        let text = String(repeating: "b", count: 200_000)
        var asked = 0
        XCTAssertThrowsError(try regex.replacingMatches(in: text, with: template) {
            asked += 1
            return asked < 10
        }) { error in XCTAssertEqual(error as? ReplacementStopped, ReplacementStopped()) }
        XCTAssertEqual(asked, 10)
        asked = 0
        let bytes = Array("bcbbb".utf8)
        let replaced = try bytes.withUnsafeBufferPointer { buffer in
            try regex.replacingMatches(utf8: buffer, with: template) { asked += 1; return true }
        }
        XCTAssertEqual(replaced, Array("xxxx".utf8))
        XCTAssertEqual(asked, 4, "four searches after the first: three more matches and the one that finds none")
    }
}

/// A replacement run in slices (`continueReplacing`, stopped and resumed after every few
/// searches) gives exactly what one run gives: how rewrites share the pool's threads.
final class ResumableReplacementTests: XCTestCase {
    func testSlicesGiveTheSameResultAsOneRun() throws {
        let cases: [(String, String, String)] = [
            ("a*", "-", "baaac"), ("b+c|b", "x", "bbbcbbbb"), ("(\\w+)@(\\w+)", "$2 at $1", "me@here, you@there."),
            ("é|(?:)", "_", "aéb"), ("z", "y", "no match here"), ("", "+", ""),
        ]
        for (pattern, replacement, text) in cases {
            let regex = try LinearRegex(pattern)
            let template = try ReplacementTemplate(replacement, groupCount: regex.groupCount)
            let expected = regex.replacingMatches(in: text, with: template)
            for every in 1...3 {
                var progress = ReplacementProgress()
                var calls = 0
                Array(text.utf8).withUnsafeBufferPointer { bytes in
                    while !progress.isFinished && calls < 1_000 {
                        calls += 1
                        var searches = 0
                        regex.continueReplacing(utf8: bytes, with: template, progress: &progress) {
                            searches += 1
                            return searches < every
                        }
                    }
                }
                let result = progress.result.map { String(decoding: $0, as: UTF8.self) } ?? text
                XCTAssertEqual(result, expected, "\(pattern) on \(text), stopping every \(every)")
            }
        }
    }
}
