import BodyCodec
import Compressors
import LinearRegex
import XCTest
@testable import Rules

/// Body text replacement: order, templates, content encodings, and what is left alone and why.
final class BodyTextRewriterTests: XCTestCase {
    private func literal(_ find: String, _ replace: String) -> TextReplacement {
        try! TextReplacement(pattern: .literal(find), replacement: replace)
    }

    private func regex(_ pattern: String, _ replace: String) -> TextReplacement {
        try! TextReplacement(pattern: .regex(try! LinearRegex(pattern)), replacement: replace)
    }

    private func rewrite(_ body: [UInt8], type: String? = "text/plain", encoding: String? = nil,
                         _ replacements: [TextReplacement]) -> BodyTextRewriter.Outcome {
        BodyTextRewriter.rewrite(body, contentType: type, contentEncoding: encoding, replacements: replacements)
    }

    private func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    /// Literal and regex replacements apply in order, every occurrence, `$1` filled from the group.
    func testReplacementsApplyInOrder() {
        XCTAssertEqual(rewrite(text("user-42 says hello to user-7"),
                               [literal("hello", "bye"), regex("user-(\\d+)", "id-$1")]),
                       .rewritten(text("id-42 says bye to id-7")))
        XCTAssertEqual(rewrite(text("a"), [literal("a", "b"), literal("b", "c")]), .rewritten(text("c")))
        XCTAssertEqual(rewrite(text("a"), [literal("b", "c"), literal("a", "b")]), .rewritten(text("b")))
    }

    /// A literal replacement is taken as written: `$1` is not a template there.
    func testLiteralReplacementIsNotATemplate() {
        XCTAssertEqual(rewrite(text("price"), [literal("price", "$1 \\0")]), .rewritten(text("$1 \\0")))
    }

    /// gzip, deflate (zlib-wrapped and raw), br, zstd and a list of encodings are decoded; the
    /// result comes back unencoded.
    func testEncodedBodiesAreDecoded() {
        let plain = text(#"{"name":"old","items":["old","old"]}"#)
        let expected = BodyTextRewriter.Outcome.rewritten(text(#"{"name":"new","items":["new","new"]}"#))
        let encoded: [(String, [UInt8])] = [
            ("gzip", Compressors.gzip(plain)),
            ("deflate", Compressors.deflate(plain, windowBits: 15)),
            ("deflate", Compressors.deflate(plain, windowBits: -15)),
            ("br", Compressors.brotli(plain)),
            ("zstd", Compressors.zstd(plain)),
            ("gzip, br", Compressors.brotli(Compressors.gzip(plain))),
        ]
        for (encoding, body) in encoded {
            XCTAssertEqual(rewrite(body, type: "application/json", encoding: encoding, [literal("old", "new")]),
                           expected, encoding)
        }
    }

    /// Nothing found: unchanged (the caller sends the body as it came, still encoded).
    func testNothingFoundIsUnchanged() {
        XCTAssertEqual(rewrite(text("hello"), [literal("bye", "x"), regex("\\d", "x")]), .unchanged)
        XCTAssertEqual(rewrite(Compressors.gzip(text("hello")), encoding: "gzip", [literal("bye", "x")]), .unchanged)
        XCTAssertEqual(rewrite(text("same"), [literal("same", "same")]), .unchanged)
    }

    /// An empty body or no replacements: unchanged, even for a type that would be skipped.
    func testEmptyBodyOrNoReplacements() {
        XCTAssertEqual(rewrite([], [literal("a", "b")]), .unchanged)
        XCTAssertEqual(rewrite([], type: "image/png", [literal("a", "b")]), .unchanged)
        XCTAssertEqual(rewrite(text("a"), []), .unchanged)
    }

    /// Textual types (text, JSON, XML, JavaScript, forms, +json) and no type at all are rewritten.
    func testTextualTypes() {
        for type in ["text/html; charset=utf-8", "application/json", "application/problem+json", "application/xml",
                     "application/javascript", "application/x-www-form-urlencoded", "TEXT/CSV", nil] {
            XCTAssertEqual(rewrite(text("a=1"), type: type, [literal("1", "2")]), .rewritten(text("a=2")), type ?? "nil")
        }
    }

    /// Other types are skipped, naming the type without its parameters.
    func testNonTextualTypesAreSkipped() {
        XCTAssertEqual(rewrite(text("abc"), type: "Image/PNG; q=1", [literal("a", "b")]), .skipped("not text (image/png)"))
        XCTAssertEqual(rewrite(text("abc"), type: "application/octet-stream", [literal("a", "b")]),
                       .skipped("not text (application/octet-stream)"))
    }

    /// Bytes that are not UTF-8 are skipped, with or without a type.
    func testInvalidUTF8IsSkipped() {
        XCTAssertEqual(rewrite([0x61, 0xFF, 0x62], [literal("a", "b")]), .skipped("not UTF-8 text"))
        XCTAssertEqual(rewrite([0x61, 0xC3], type: nil, [literal("a", "b")]), .skipped("not UTF-8 text"))
    }

    /// A body that does not decode is skipped with the decoder's note.
    func testCorruptBodyIsSkippedWithTheDecodersNote() {
        var corrupt = Compressors.gzip(text(String(repeating: "hello ", count: 100)))
        corrupt[20] ^= 0xFF
        corrupt[21] ^= 0xFF
        let note = BodyDecoder.decode(corrupt, contentEncoding: "gzip").note
        XCTAssertNotNil(note)
        XCTAssertTrue(note?.hasPrefix("corrupt gzip body (") == true, note ?? "")
        // The decoder's note without its viewer's ending (": shown as captured").
        let shown = ": shown as captured"
        XCTAssertTrue(note?.hasSuffix(shown) == true, note ?? "")
        XCTAssertEqual(rewrite(corrupt, encoding: "gzip", [literal("hello", "bye")]), .skipped(String(note!.dropLast(shown.count))))
        let plainNote = BodyDecoder.decode(text("hello"), contentEncoding: "gzip").note ?? "no note"
        XCTAssertEqual(rewrite(text("hello"), encoding: "gzip", [literal("hello", "bye")]),
                       .skipped(String(plainNote.dropLast(shown.count))))
    }

    /// An encoding the decoder does not know is skipped, named.
    func testUnknownEncodingIsSkipped() {
        XCTAssertEqual(rewrite(text("hello"), encoding: "compress", [literal("hello", "bye")]),
                       .skipped("unknown content encoding 'compress'"))
    }

    /// A job run in many short slices gives what one run gives, literal and regex replacements
    /// mixed; its time limit counts the slices' running time, so a quadratic one still stops.
    func testAJobInSlicesGivesTheSameOutcome() {
        let replacements = [literal("hello", "bye"), regex("b+c|b", "x"), regex("user-(\\d+)", "id-$1")]
        let body = text(String(repeating: "user-1 says hello bbcb ", count: 300))
        let job = BodyTextRewriter.Job(body, contentType: "text/plain", contentEncoding: nil, replacements: replacements)
        var turns = 0
        var outcome: BodyTextRewriter.Outcome?
        while outcome == nil && turns < 100_000 {
            turns += 1
            outcome = job.run(for: .microseconds(1))
        }
        XCTAssertGreaterThan(turns, 1, "it took several slices")
        XCTAssertEqual(outcome, rewrite(body, replacements))

        let quadratic = BodyTextRewriter.Job(text(String(repeating: "b", count: 200_000)), contentType: "text/plain",
                                             contentEncoding: nil, replacements: [regex("b+c|b", "x")], timeLimit: .milliseconds(100))
        var stopped: BodyTextRewriter.Outcome?
        for _ in 0..<100_000 where stopped == nil {
            stopped = quadratic.run(for: .milliseconds(5))
        }
        XCTAssertEqual(stopped, .skipped("a regex replacement ran past 0.1 seconds (its pattern reads far ahead for every match)"))
    }
}
