import Foundation
import ProxyModel
import RequestComposer
import XCTest

/// Hostile or broken curl command lines: each refused with a one-line reason (and its line
/// where known), never split, run or read past; large inputs parsed in one pass.
final class CurlAttackTests: XCTestCase {
    private func refusal(_ line: String, readFile: (String) throws -> [UInt8] = { _ in [] },
                         file: StaticString = #filePath, lineNumber: UInt = #line) -> ComposeError? {
        do {
            let request = try CurlCommandLine.parse(line, readFile: readFile)
            XCTFail("accepted: \(request)", file: file, line: lineNumber)
            return nil
        } catch let error as ComposeError {
            XCTAssertFalse(error.message.contains("\n"), "one line: \(error.message)", file: file, line: lineNumber)
            return error
        } catch {
            XCTFail("not a ComposeError: \(error)", file: file, line: lineNumber)
            return nil
        }
    }

    func testUnterminatedQuotes() {
        XCTAssertEqual(refusal("curl https://a.test/ \\\n -H 'X: 1")?.line, 2)
        XCTAssertTrue(refusal("curl \"https://a.test/")?.message.contains("never closed") == true)
        XCTAssertTrue(refusal("curl https://a.test/ -d $'abc\\'")?.message.contains("never closed") == true)
    }

    func testLoneTrailingBackslash() {
        XCTAssertTrue(refusal("curl https://a.test/ \\")?.message.contains("lone backslash") == true)
    }

    func testEmptyCommand() {
        XCTAssertEqual(refusal("")?.message, "the command line is empty: paste a curl command")
        XCTAssertEqual(refusal("  \n# only a comment\n\t\n")?.message, "the command line is empty: paste a curl command")
        XCTAssertTrue(refusal("wget https://a.test/")?.message.contains("not curl") == true)
        XCTAssertTrue(refusal("curl -s")?.message.contains("no URL") == true)
    }

    func testTwoURLs() {
        let error = refusal("curl https://a.test/one \\\n  https://a.test/two")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.message.contains("more than one URL") == true)
        XCTAssertNotNil(refusal("curl https://a.test/one --url https://a.test/two"))
    }

    func testNonHTTPSchemes() {
        for url in ["file:///etc/passwd", "ftp://a.test/x", "gopher://a.test/", "javascript:alert(1)"] {
            XCTAssertNotNil(refusal("curl '\(url)'"), url)
        }
        XCTAssertTrue(refusal("curl file:///etc/passwd")?.message.contains("http:// or https://") == true)
    }

    func testHeaderWithoutColon() {
        XCTAssertTrue(refusal("curl https://a.test/ -H 'X-Header value'")?.message.contains("no colon") == true)
        XCTAssertNotNil(refusal("curl https://a.test/ -H 'Bad Name: v'"))
        XCTAssertNotNil(refusal("curl https://a.test/ -H @headers.txt"))
    }

    func testHeaderWithCRLFIsRefusedNotSplit() {
        let error = refusal(#"curl https://a.test/ -H $'X: a\r\nInjected: b'"#)
        XCTAssertTrue(error?.message.contains("carriage return") == true, "\(String(describing: error))")
        XCTAssertNotNil(refusal("curl https://a.test/ -H \"X: a\nInjected: b\""))
        XCTAssertNotNil(refusal(#"curl https://a.test/ -A $'agent\nInjected: b'"#))
        XCTAssertNotNil(refusal(#"curl https://a.test/ -b $'a=1\r\nX: y'"#))
        XCTAssertNotNil(refusal(#"curl $'https://a.test/\r\nX: y'"#))
    }

    func testNULBytes() {
        XCTAssertEqual(refusal("curl https://a.test/ \\\n -H 'X: a\u{0}b'")?.line, 2)
        XCTAssertTrue(refusal(#"curl https://a.test/ -d $'a\0b'"#)?.message.contains("NUL") == true)
        XCTAssertTrue(refusal(#"curl https://a.test/ -d $'a\400b'"#)?.message.contains("NUL") == true, "\\400 wraps to NUL")
        XCTAssertNotNil(refusal(#"curl https://a.test/ -d $'a\x00b'"#))
        XCTAssertNotNil(refusal(#"curl https://a.test/ -d $'a\u0000b'"#))
        XCTAssertNotNil(refusal(#"curl https://a.test/ -d "$(printf '\000')""#))
    }

    func testShellSyntaxIsNeverRun() {
        for line in ["curl https://a.test/$(id)", "curl https://a.test/`id`", "curl \"https://a.test/$HOME\"",
                     "curl https://a.test/ ; rm -rf /", "curl https://a.test/ && echo", "curl https://a.test/ > out",
                     "curl https://a.test/?a=1&b=2", "cat f | curl https://a.test/", "curl https://a.test/ \"${x}\"",
                     "curl https://a.test/\nwget https://b.test/"] {
            XCTAssertNotNil(refusal(line), line)
        }
    }

    func testOptionMissingItsArgument() {
        let error = refusal("curl https://a.test/ \\\n  -H")
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.message.contains("-H needs a value") == true, "\(String(describing: error))")
        XCTAssertTrue(refusal("curl https://a.test/ --data")?.message.contains("--data needs a value") == true)
    }

    func testUnknownOption() {
        XCTAssertEqual(refusal("curl --foo https://a.test/")?.message, "curl option --foo is not supported by import; remove it")
        XCTAssertEqual(refusal("curl -sZ https://a.test/")?.message, "curl option -Z is not supported by import; remove it")
    }

    func testFileThatCannotBeReadIsNamed() {
        struct Unreadable: Error {}
        let error = refusal("curl https://a.test/ \\\n --data-binary @/secret/body.json") { _ in throw Unreadable() }
        XCTAssertEqual(error?.line, 2)
        XCTAssertTrue(error?.message.contains("/secret/body.json") == true, "\(String(describing: error))")
        XCTAssertTrue(refusal("curl https://a.test/ -d @-")?.message.contains("standard input") == true)
    }

    /// A megabyte of input, as one body and as ~100,000 words: one pass each (a quadratic step
    /// would take minutes here).
    func testOneMegabyteCommandLines() throws {
        let big = String(repeating: "abcdefghij", count: 100_000)
        let body = try CurlCommandLine.parse("curl https://a.test/ --data-raw '\(big)'") { _ in [] }
        XCTAssertEqual(body.body.count, 1_000_000)
        let escapes = String(repeating: #"\n\x41"#, count: 150_000)
        XCTAssertEqual(try CurlCommandLine.parse("curl https://a.test/ -d $'\(escapes)'") { _ in [] }.body.count, 300_000)
        let words = String(repeating: "-H 'X: 1' -b a=1 ", count: 60_000)
        let many = try CurlCommandLine.parse("curl https://a.test/ \(words)") { _ in [] }
        XCTAssertEqual(many.headers.count, 60_001)
        let lines = String(repeating: " -d x \\\n", count: 100_000)
        XCTAssertEqual(try CurlCommandLine.parse("curl https://a.test/ \(lines)") { _ in [] }.body.count, 199_999)
        XCTAssertNotNil(refusal("curl https://a.test/ '" + big))
    }
}
