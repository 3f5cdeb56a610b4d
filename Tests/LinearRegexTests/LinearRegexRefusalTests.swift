import Foundation
import LinearRegex
import XCTest

/// What RE2 cannot run is refused when compiled: the reason in words (never RE2's own text
/// alone) and the position of the construct at fault; look-alikes that are fine are not refused.
final class LinearRegexRefusalTests: XCTestCase {
    private func refusal(_ pattern: String, _ options: LinearRegex.Options = [],
                         file: StaticString = #filePath, line: UInt = #line) -> LinearRegexError? {
        do {
            let regex = try LinearRegex(pattern, options: options)
            XCTFail("'\(pattern)' compiled (\(regex.groupCount) groups); expected a refusal", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Asserts the refusal of `pattern`: its reason contains `words`, it points at `offset`
    /// (characters), and it carries none of RE2's own phrases.
    private func assertRefused(_ pattern: String, _ words: String, at offset: Int?,
                               file: StaticString = #filePath, line: UInt = #line) {
        guard let error = refusal(pattern, file: file, line: line) else { return }
        XCTAssertTrue(error.reason.contains(words), "'\(pattern)': \(error.reason)", file: file, line: line)
        XCTAssertEqual(error.characterOffset, offset, "'\(pattern)': \(error.reason)", file: file, line: line)
        XCTAssertEqual(error.pattern, pattern, file: file, line: line)
        for raw in ["invalid perl operator", "invalid escape sequence", "missing ):", "bad repetition operator:",
                    "invalid repetition size", "no argument for repetition", "pattern too large - compile failed"] {
            XCTAssertFalse(error.reason.contains(raw), "RE2's own text in '\(error.reason)'", file: file, line: line)
        }
    }

    private let linear = "ProxyApp's regexes run in linear time (RE2 syntax)"

    /// Backreferences, numbered and named, at the backslash.
    func testBackreferences() {
        assertRefused("(a)\\1", "backreferences like \\1 are not supported: \(linear)", at: 3)
        assertRefused("(a)x\\12", "backreferences like \\12 are not supported", at: 4)
        assertRefused("(?P<n>a)\\k<n>", "named backreferences like \\k<name>", at: 8)
        assertRefused("(?P<n>a)(?P=n)", "named backreferences like (?P=name)", at: 8)
        assertRefused("(a)\\g1", "backreferences and subroutine calls", at: 3)
        XCTAssertEqual(refusal("(a)\\1")?.reason,
                       "backreferences like \\1 are not supported: \(linear) (for a character code write \\x0A)")
    }

    /// The four lookarounds, at the parenthesis.
    func testLookaround() {
        assertRefused("x(?=y)", "lookahead (?= is not supported: \(linear)", at: 1)
        assertRefused("(?!y)x", "negative lookahead (?! is not supported", at: 0)
        assertRefused("ab(?<=b)", "lookbehind (?<= is not supported", at: 2)
        assertRefused("(?<!a)b", "negative lookbehind (?<! is not supported", at: 0)
        assertRefused("(?:a|(?=b))", "lookahead (?=", at: 5)
    }

    /// Possessive quantifiers (every kind of repeat), atomic groups, conditionals, recursion.
    func testOtherBacktrackingConstructs() {
        assertRefused("a++", "possessive quantifiers like ++ are not supported (drop the last +): \(linear)", at: 1)
        assertRefused("ba*+", "possessive quantifiers like *+", at: 2)
        assertRefused("a?+", "possessive quantifiers like ?+", at: 1)
        assertRefused("a{2,5}+", "possessive quantifiers like {2,5}+", at: 1)
        assertRefused("(?>a+)b", "atomic groups (?> are not supported", at: 0)
        assertRefused("(a)?(?(1)b|c)", "conditionals (?( are not supported", at: 4)
        assertRefused("a(?R)?b", "recursion and subroutine calls", at: 1)
        assertRefused("(a)(?1)", "recursion and subroutine calls", at: 3)
        assertRefused("(a)(?-1)", "recursion and subroutine calls like (?-1)", at: 3)
        assertRefused("(?P<n>a)(?P>n)", "recursion and subroutine calls like (?P>name)", at: 8)
        assertRefused("\\G", "\\G (where the previous match ended) is not supported", at: 0)
        assertRefused("ab\\K", "\\K (restart the match here)", at: 2)
    }

    /// ICU syntax RE2 lacks or would read differently: refused with what to write instead.
    func testICUOnlySyntax() {
        assertRefused("a\\Z", "write \\z for the end of the text, or $", at: 1)
        assertRefused("a\\R", "write (?:\\r\\n|\\n|\\r)", at: 1)
        assertRefused("\\X", "a whole grapheme", at: 0)
        assertRefused("a(?#note)b", "comments (?#…) are not supported", at: 1)
        assertRefused("(?ix)a b", "the flag x (free spacing) is not supported", at: 3)
        assertRefused("[a-z[0-9]]", "nested character classes", at: 4)
        assertRefused("[a-z&&[aeiou]]", "class intersections with && are not supported", at: 4)
        assertRefused("(?|(a)|(b))", "branch reset groups", at: 0)
    }

    /// Look-alikes that are plain RE2 are not refused: escaped or in a class, lazy, counted
    /// braces that are not a repeat, \Q…\E, POSIX classes, flags.
    func testLookAlikesCompile() throws {
        let fine = ["\\(?=x", "[(?=]", "a+?", "a*?b", "a{2}?", "\\+\\+", "[+]+", "a{,2}+", "x{}+", "\\x{41}+", "\\p{L}+",
                    "\\Q(?=a++\\1\\E", "[[:alpha:]]+", "[]a]", "[^]a]", "(?i)abc", "(?s:.)", "(?U)a+", "\\0", "\\x0A",
                    "a\\z", "[\\[]", "[&]", "a&&b", "(?:a)", "\\.\\*"]
        for pattern in fine {
            XCTAssertNoThrow(try LinearRegex(pattern), pattern)
        }
        XCTAssertTrue(try LinearRegex("\\Q(?=a++\\E").matches("x(?=a++y"))
        XCTAssertTrue(try LinearRegex("a&&b").matches("a&&b"))
    }

    /// ICU's named group `(?<name>…)` is read as RE2's `(?P<name>…)`: it compiles and captures.
    func testICUNamedGroupsAreTranslated() throws {
        let regex = try LinearRegex("(?<year>\\d{4})-(?<month>\\d\\d)")
        XCTAssertEqual(regex.groupCount, 2)
        XCTAssertEqual(regex.pattern, "(?<year>\\d{4})-(?<month>\\d\\d)", "the pattern is kept as written")
        let text = "on 2024-05-01"
        let ranges = try XCTUnwrap(regex.firstMatch(in: text))
        XCTAssertEqual(ranges[2].map { String(text[$0]) }, "05")
        let escaped = "\\(?<x>a)"
        XCTAssertThrowsError(try LinearRegex(escaped), "an escaped ( starts no group, so (?< is not a group there")
    }

    /// Malformed patterns: RE2's error code in words, at the fragment it blames.
    func testSyntaxErrorsInWords() {
        assertRefused("ab(c", "missing ) to close the group opened here", at: 2)
        assertRefused("(a(b)(c", "missing ) to close the group opened here", at: 5)
        assertRefused("(a[)]", "missing ) to close the group opened here", at: 0)
        assertRefused("a)", "unexpected ): no group is open", at: 1)
        assertRefused("(a)\\))", "unexpected ): no group is open", at: 5)
        assertRefused("[z-a]", "the range z-a runs backwards: write the lower character first", at: 1)
        assertRefused("[[:nope:]]", "unknown character class [:nope:]", at: 1)
        assertRefused("x[abc", "missing ] to close the character class [abc", at: 1)
        assertRefused("*a", "* has nothing before it to repeat (write \\* for the character itself)", at: 0)
        assertRefused("a**", "a repeat cannot itself be repeated", at: 1)
        assertRefused("a{1001}", "bad repeat count {1001}: counts go up to 1000", at: 1)
        assertRefused("(a{10}){200}", "also multiplied across nested repeats", at: 7)
        assertRefused("ab\\", "ends with a lone \\", at: 2)
        assertRefused("\\e", "the escape \\e is not supported", at: 0)
        assertRefused("\\p{Nope}", "unknown character class \\p{Nope} (RE2 syntax: e.g. \\p{L}", at: 0)
        assertRefused("(?P<a b>x)", "bad group name", at: 0)
    }

    /// Size: a pattern over 64 KiB is refused before RE2 sees it; one whose program would pass the
    /// memory limit is refused by RE2, both in words.
    func testTooLongAndTooLarge() {
        let long = String(repeating: "a", count: LinearRegex.maximumPatternLength + 1)
        assertRefused(long, "the pattern is too long (65537 bytes; at most 65536)", at: nil)
        XCTAssertNoThrow(try LinearRegex(String(repeating: "a", count: LinearRegex.maximumPatternLength)))
        assertRefused("\\pL{1000}", "the pattern is too large: compiled, it needs more than the 8 MiB a regex may use", at: nil)
    }

    /// Deep nesting compiles (or is refused) on a 512 KiB stack, as filters run on worker threads.
    func testDeepNestingOnASmallStack() {
        let depth = 20_000
        let patterns = [String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth),
                        String(repeating: "(?:", count: depth) + "a" + String(repeating: ")*", count: depth),
                        String(repeating: "[", count: depth)]
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.outcomes = patterns.map { pattern in
                do { return try LinearRegex(pattern).matches("xa") ? "match" : "no match" } catch { return "refused" }
            }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        XCTAssertEqual(box.outcomes, ["match", "refused", "refused"])
    }

    /// Control characters in a pattern reach a message escaped.
    func testMessagesEscapeControlCharacters() {
        let error = refusal("\u{1B}[2J\\e")
        XCTAssertEqual(error?.reason, "the escape \\e is not supported (RE2 syntax)")
        XCTAssertEqual(LinearRegexError.excerpt("a\u{1B}]52;c\u{7}b"), "a\\x1B]52;c\\x07b")
        XCTAssertEqual(LinearRegexError.excerpt(String(repeating: "x", count: 100)), String(repeating: "x", count: 60) + "…")
    }

    /// Written by the small-stack thread before it signals.
    private final class Box: @unchecked Sendable {
        var outcomes: [String] = []
    }
}
