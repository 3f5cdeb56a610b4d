import Foundation
import LinearRegex
import XCTest

/// Compiling and searching: options, ranges in bytes and in Strings, context before the start,
/// sharing across threads, and the patterns that stall a backtracking engine.
final class LinearRegexTests: XCTestCase {
    private func regex(_ pattern: String, _ options: LinearRegex.Options = []) throws -> LinearRegex {
        try LinearRegex(pattern, options: options)
    }

    /// A search finds a match anywhere; anchors pin it; case counts unless asked not to.
    func testSearchAnywhereAndCase() throws {
        XCTAssertTrue(try regex("b+").matches("aabbbcc"))
        XCTAssertFalse(try regex("^b").matches("ab"))
        XCTAssertTrue(try regex("c$").matches("abc"))
        XCTAssertFalse(try regex("API").matches("api.example.com"))
        XCTAssertTrue(try regex("API", .caseInsensitive).matches("api.example.com"))
        XCTAssertTrue(try regex("STRASSE|ÉTÉ", .caseInsensitive).matches("un été"), "case folding beyond ASCII")
    }

    /// `.` crosses `\n` only with `.dotMatchesNewlines`; `literal` makes every character itself.
    func testDotAndLiteralOptions() throws {
        XCTAssertFalse(try regex("a.b").matches("a\nb"))
        XCTAssertTrue(try regex("a.b", .dotMatchesNewlines).matches("a\nb"))
        XCTAssertTrue(try regex("(?s)a.b").matches("a\nb"), "the inline flag works too")
        let literal = try regex("a.b(", .literal)
        XCTAssertTrue(literal.matches("xa.b(y"))
        XCTAssertFalse(literal.matches("axb("))
        XCTAssertTrue(try regex("A.B(", [.literal, .caseInsensitive]).matches("a.b("))
    }

    /// An empty pattern matches everything, the empty text included.
    func testEmptyPatternAndText() throws {
        XCTAssertTrue(try regex("").matches(""))
        XCTAssertTrue(try regex("").matches("abc"))
        XCTAssertTrue(try regex("^$").matches(""))
        XCTAssertFalse(try regex("a").matches(""))
    }

    /// Ranges are UTF-8 offsets over bytes, and String ranges over Strings; a group that took no
    /// part is nil.
    func testFirstMatchRanges() throws {
        let pattern = try regex("w(ö)r|(x)")
        XCTAssertEqual(pattern.groupCount, 2)
        let text = "héllo wörld"
        let ranges = try XCTUnwrap(pattern.firstMatch(in: text))
        XCTAssertEqual(ranges.count, 3)
        XCTAssertEqual(ranges[0].map { String(text[$0]) }, "wör")
        XCTAssertEqual(ranges[1].map { String(text[$0]) }, "ö")
        XCTAssertNil(ranges[2])
        let bytes = Array(text.utf8)
        let byteRanges = try XCTUnwrap(bytes.withUnsafeBufferPointer { pattern.firstMatch(utf8: $0) })
        XCTAssertEqual(byteRanges[0], 7..<11)
        XCTAssertEqual(byteRanges[1], 8..<10)
        XCTAssertNil(pattern.firstMatch(in: "nothing here"))
    }

    /// NUL bytes in a pattern and a text are ordinary characters (lengths, not C strings); more
    /// groups than the shim keeps on its stack come back whole.
    func testNULBytesAndManyGroups() throws {
        XCTAssertTrue(try regex("a\u{0}b").matches("xa\u{0}by"))
        XCTAssertFalse(try regex("a\u{0}b").matches("ab"))
        let many = try regex(String(repeating: "(.)", count: 20))
        let text = "abcdefghijklmnopqrstuvwxyz"
        let ranges = try XCTUnwrap(many.firstMatch(in: text))
        XCTAssertEqual(ranges.count, 21)
        XCTAssertEqual(ranges.dropFirst().map { $0.map { String(text[$0]) } }, "abcdefghijklmnopqrst".map { String($0) })
    }

    /// A search from an offset sees the bytes before it as context: `^` does not match there,
    /// and `\b` knows whether a word character precedes it.
    func testSearchFromAnOffsetKeepsContext() throws {
        let bytes = Array("abab".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            XCTAssertNil(try! regex("^ab").firstMatch(utf8: buffer, from: 2))
            XCTAssertEqual(try! regex("ab").firstMatch(utf8: buffer, from: 1)?[0], 2..<4)
            XCTAssertNil(try! regex("\\bab").firstMatch(utf8: buffer, from: 1))
            XCTAssertNil(try! regex("ab").firstMatch(utf8: buffer, from: 5), "past the end: no match, no trap")
            XCTAssertEqual(try! regex("$").firstMatch(utf8: buffer, from: 4)?[0], 4..<4)
        }
    }

    /// Bytes that are not valid UTF-8 are searched without trapping; `.` does not match them.
    func testInvalidUTF8Bytes() throws {
        let bytes: [UInt8] = [0x61, 0xFF, 0xC3, 0x62]
        XCTAssertTrue(try regex("a").matches(utf8: bytes))
        XCTAssertTrue(try regex("b$").matches(utf8: bytes))
        XCTAssertFalse(try regex("a.b").matches(utf8: bytes))
    }

    /// One compiled regex searched from many threads at once answers as it does alone.
    func testSharedAcrossThreads() throws {
        let pattern = try regex("^/v[12]/users/([0-9]+)(/|$)", .caseInsensitive)
        let texts = (0..<64).map { $0.isMultiple(of: 2) ? "/v1/users/\($0)/x" : "/v3/users/\($0)" }
        let results = Results(count: texts.count * 50)
        DispatchQueue.concurrentPerform(iterations: texts.count * 50) { index in
            results.set(index, pattern.matches(texts[index % texts.count]))
        }
        for index in 0..<(texts.count * 50) {
            XCTAssertEqual(results.get(index), (index % texts.count).isMultiple(of: 2))
        }
    }

    /// The patterns that take a backtracking engine exponential time, against 100 KB of the
    /// input that triggers it, answer (right) at once. A regression would hang this test.
    func testCatastrophicPatternsAreLinear() throws {
        let hostile = Self.hostileCases
        for (pattern, text, expected) in hostile {
            XCTAssertEqual(try regex(pattern).matches(text), expected, pattern)
        }
        XCTAssertEqual(try regex("(a|aa)+$").firstMatch(in: String(repeating: "a", count: 100_000))?[0]?.isEmpty, false)
    }

    /// The hostile (pattern, text, whether it matches) triples, each text about 100 KB.
    static let hostileCases: [(String, String, Bool)] = {
        let run = String(repeating: "a", count: 100_000)
        let xs = String(repeating: "x", count: 100_000)
        let words = String(repeating: "word ", count: 20_000)
        return [
            ("(a+)+$", run + "b", false),
            ("^/(a+)+$", "/" + run + "b", false),
            ("(a+)+$", run, true),
            ("(x+x+)+y", xs, false),
            ("(x+x+)+y", xs + "y", true),
            ("^(\\w+\\s?)*$", words + "!", false),
            ("^(\\w+\\s?)*$", words, true),
            ("(a|aa)+b", run, false),
            ("(.*a){20}z", run, false),
            ("^(([a-z])+.)+[A-Z]([a-z])+$", run + "!", false),
        ]
    }()

    /// Written by concurrent iterations at distinct indexes, read after all finished.
    private final class Results: @unchecked Sendable {
        private var values: [Bool]
        private let lock = NSLock()
        init(count: Int) { values = Array(repeating: false, count: count) }
        func set(_ index: Int, _ value: Bool) { lock.withLock { values[index] = value } }
        func get(_ index: Int) -> Bool { lock.withLock { values[index] } }
    }
}
