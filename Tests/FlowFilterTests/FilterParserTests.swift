import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// The parser: every operator, precedence, quoting, and where each kind of mistake is reported.
final class FilterParserTests: XCTestCase {
    /// Each operator parses to its own predicate (shown fully parenthesised by `description`).
    func testEveryOperator() throws {
        let cases: [(String, String)] = [
            ("~d example", #"~d "example""#), ("~u /api", #"~u "/api""#), ("~m POST", #"~m "POST""#),
            ("~c 404", "~c 404"),
            ("~t json", #"~t "json""#), ("~tq form", #"~tq "form""#), ("~ts html", #"~ts "html""#),
            ("~h Accept", #"~h "Accept""#), ("~hq Cookie", #"~hq "Cookie""#), ("~hs Server", #"~hs "Server""#),
            ("~b secret", #"~b "secret""#), ("~bq user", #"~bq "user""#), ("~bs token", #"~bs "token""#),
            ("~q", "~q"), ("~s", "~s"), ("~e", "~e"), ("~marked", "~marked"), ("~websocket", "~websocket"),
            ("~http", "~http"), ("~h2", "~h2"), ("~tcp", "~tcp"), ("~all", "~all"), ("~rule 'Block ads'", #"~rule "Block ads""#),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try parse(text), expected, text)
        }
    }

    /// `!` binds tighter than `&`, which binds tighter than `|`; parentheses override.
    func testPrecedence() throws {
        XCTAssertEqual(try parse("~q | ~s & ~e"), "(~q | (~s & ~e))")
        XCTAssertEqual(try parse("~q & ~s | ~e"), "((~q & ~s) | ~e)")
        XCTAssertEqual(try parse("!~q & ~s"), "(!~q & ~s)")
        XCTAssertEqual(try parse("!(~q & ~s)"), "!(~q & ~s)")
        XCTAssertEqual(try parse("!!~e"), "!!~e")
        XCTAssertEqual(try parse("(~q | ~s) & ~e"), "((~q | ~s) & ~e)")
        XCTAssertEqual(try parse("~q & ~s & ~e"), "((~q & ~s) & ~e)")
        XCTAssertEqual(try parse("~q|~s"), "(~q | ~s)", "no spaces needed around operators")
    }

    /// Juxtaposition is AND with the lowest precedence: it joins whole `|` expressions.
    func testJuxtapositionIsALooseAnd() throws {
        XCTAssertEqual(try parse(#"~d a ~m GET"#), #"(~d "a" & ~m "GET")"#)
        XCTAssertEqual(try parse("~q | ~s ~e"), "((~q | ~s) & ~e)")
        XCTAssertEqual(try parse("~e ~q | ~s"), "(~e & (~q | ~s))")
        XCTAssertEqual(try parse("(~e ~q) | ~s"), "((~e & ~q) | ~s)")
        XCTAssertEqual(try parse("~e !~q ~s"), "((~e & !~q) & ~s)")
    }

    /// A word where an expression is expected is a URL regex (`~u`), quoted or not.
    func testBareRegexMeansURL() throws {
        XCTAssertEqual(try parse("example.com/api"), #"~u "example.com/api""#)
        XCTAssertEqual(try parse(#""a b" & ~s"#), #"(~u "a b" & ~s)"#)
        XCTAssertEqual(try parse("!login"), #"!~u "login""#)
    }

    /// Double and single quotes hold spaces and parentheses; backslash escapes the quotes and
    /// itself, and every other backslash stays for the regex.
    func testQuotingAndEscapes() throws {
        XCTAssertEqual(try pattern(#"~h "User-Agent: curl""#), "User-Agent: curl")
        XCTAssertEqual(try pattern(#"~h 'User-Agent: curl'"#), "User-Agent: curl")
        XCTAssertEqual(try pattern(#"~b "say \"hi\"""#), #"say "hi""#)
        XCTAssertEqual(try pattern(#"~b 'it\'s'"#), "it's")
        XCTAssertEqual(try pattern(#"~b 'a"b'"#), #"a"b"#)
        XCTAssertEqual(try pattern(#"~b "a\\b""#), #"a\b"#)
        XCTAssertEqual(try pattern(#"~u "\d+\.json""#), #"\d+\.json"#)
        XCTAssertEqual(try pattern(#"~u "(a|b)""#), "(a|b)")
        XCTAssertEqual(try pattern("~u a&b|[(]!"), "a&b|[(]!", "an unquoted argument only stops at whitespace and ')'")
        XCTAssertEqual(try pattern(#"~u """#), "", "an empty quoted argument is allowed")
        XCTAssertEqual(try parse("(~d x)"), #"~d "x""#, "an unquoted word stops at ')'")
        XCTAssertEqual(try parse("~c200"), "~c 200", "the argument may follow the operator directly")
        XCTAssertEqual(try pattern(#"~rule "Rewrite \"UA\" \\ staging""#), #"Rewrite "UA" \ staging"#)
    }

    /// Regexes are case-insensitive.
    func testRegexesIgnoreCase() throws {
        let regex = try FilterRegex("^Example\\.COM$")
        XCTAssertTrue(regex.matches("example.com"))
        XCTAssertTrue(regex.matches("EXAMPLE.com"))
        XCTAssertFalse(regex.matches("example.com.evil"))
    }

    /// The description quotes patterns so that it parses back to the same tree.
    func testDescriptionParsesBack() throws {
        for text in [#"~h "a \"b\" \\ c" | !(~d x ~c 200)"#, #"~b 'it\'s' ~m "P(OST)?""#] {
            let once = try parse(text)
            XCTAssertEqual(try parse(once), once, text)
        }
    }

    /// Each mistake is reported with its message at the position of the culprit.
    func testErrorPositions() {
        assertError("~x foo", "unknown operator ~x", at: 0)
        assertError("~d a & ~dom b", "unknown operator ~dom", at: 7)
        assertError("~d", "~d needs an argument", at: 2)
        assertError("~d   ", "~d needs an argument", at: 5)
        assertError("(~m )", "~m needs an argument", at: 4)
        assertError("~h & ~s", "~h needs an argument", at: 3)
        assertError("~b ~s", "~b needs an argument", at: 3)
        assertError("(~q | ~s", "expected ')'", at: 8)
        assertError("((~q) ~s", "expected ')'", at: 8)
        assertError(#"~b "abc"#, "unclosed quote", at: 3)
        assertError("~b 'it\\'", "unclosed quote", at: 3)
        assertError("~q )", "unexpected ')'", at: 3)
        assertError("(~q))", "unexpected ')'", at: 4)
        assertError("~u (a", #"bad regex "(a": missing ) to close the group opened here"#, at: 3)
        assertError("~u (a b)", #"bad regex "(a": missing ) to close the group opened here (quote it if it holds spaces or ')')"#, at: 3)
        assertError(#"~q & ~u "[z-a]""#, #"bad regex "[z-a]": the range z-a runs backwards: write the lower character first"#, at: 10)
        assertError("~rule", "~rule needs an argument", at: 5)
        assertError("~rules x", "unknown operator ~rules", at: 0)
        assertError("~rule [", #"bad regex "[": missing ] to close the character class ["#, at: 6)
        assertError("~c abc", "~c needs a status code (a number), not 'abc'", at: 3)
        assertError("~c 2000", "~c needs a status code (a number), not '2000'", at: 3)
        assertError("~q &", "expected an expression", at: 4)
        assertError("& ~q", "expected an expression before '&'", at: 0)
        assertError("~q | | ~s", "expected an expression before '|'", at: 5)
        assertError("!", "expected an expression", at: 1)
        assertError("()", "expected an expression before ')'", at: 1)
        assertError("~ d", "expected an operator name after ~", at: 0)
        assertError("", "empty filter", at: 0)
        assertError(" \t ", "empty filter", at: 0)
    }

    /// Nesting is capped (each level is a call frame); the error points at the level too many.
    func testNestingIsCapped() throws {
        XCTAssertNoThrow(try FlowFilter(parsing: String(repeating: "!", count: 100) + "~q"))
        XCTAssertNoThrow(try FlowFilter(parsing: String(repeating: "(", count: 100) + "~q" + String(repeating: ")", count: 100)))
        XCTAssertNoThrow(try FlowFilter(parsing: String(repeating: "!(", count: 50) + "~q" + String(repeating: ")", count: 50)))
        let message = "nested too deeply (more than 100 levels)"
        assertError(String(repeating: "!", count: 5_000) + "~q", message, at: 100)
        assertError(String(repeating: "(", count: 30_000), message, at: 100)
        assertError("~s | " + String(repeating: "(!", count: 60) + "~q", message, at: 105)
    }

    /// Chains are balanced trees: the same grouping for three operands, log₂(n) deep for many,
    /// so 100,000 terms parse, evaluate, print and are freed on a 512 KiB stack.
    func testLongChainsAreBalanced() throws {
        XCTAssertEqual(try parse("~q | ~s | ~e | ~marked"), "((~q | ~s) | (~e | ~marked))")
        let chains = [Array(repeating: "~q", count: 100_000).joined(separator: " | "),
                      Array(repeating: "~s", count: 100_000).joined(separator: " & "),
                      Array(repeating: "~q", count: 100_000).joined(separator: " ")]
        let done = DispatchSemaphore(value: 0)
        let results = Results()
        let thread = Thread {
            let flow = Flow(kind: .http, method: "GET", host: "a.test", path: "/", status: 200)
            results.values = chains.map { (try? FlowFilter(parsing: $0))?.matches(flow) }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        XCTAssertEqual(results.values, [false, true, false])
    }

    /// Written by the test's thread before it signals.
    private final class Results: @unchecked Sendable {
        var values: [Bool?] = []
    }

    /// Positions count characters, not bytes, so the caret lines up under non-ASCII text.
    func testCaretDiagramCountsCharacters() throws {
        let error = try XCTUnwrap(syntaxError("~d bücher ~zz"))
        XCTAssertEqual(error.position, 10)
        XCTAssertEqual(error.description, "unknown operator ~zz at column 11")
        XCTAssertEqual(error.caretDiagram, "~d bücher ~zz\n          ^")
    }

    // MARK: - Helpers

    private func parse(_ text: String) throws -> String {
        try FlowFilter(parsing: text).expression.description
    }

    /// The regex pattern of a single-predicate filter.
    private func pattern(_ text: String) throws -> String? {
        switch try FlowFilter(parsing: text).expression {
        case .url(let regex), .domain(let regex), .method(let regex), .header(let regex, _),
             .body(let regex, _), .contentType(let regex, _), .rule(let regex):
            return regex.pattern
        default:
            return nil
        }
    }

    private func assertError(_ text: String, _ message: String, at position: Int,
                             file: StaticString = #filePath, line: UInt = #line) {
        guard let error = syntaxError(text) else {
            return XCTFail("\(text) parsed", file: file, line: line)
        }
        XCTAssertEqual(error, FilterSyntaxError(message: message, position: position, text: text), file: file, line: line)
    }
}
