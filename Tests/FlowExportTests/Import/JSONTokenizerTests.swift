@testable import FlowExport
import Foundation
import XCTest

/// The streaming tokenizer checks all of JSON's syntax: it must never flag valid JSON, must place
/// the faults it finds, and must give the same answers whatever the chunks the input arrives in.
final class JSONTokenizerTests: XCTestCase {
    /// Reads the whole document; nil when it is valid, else the error message.
    private static func firstError(_ document: String, chunkSize: Int = .max) -> String? {
        let tokens = JSONTokenizer(source: MemorySource(Data(document.utf8), chunkSize: chunkSize))
        do {
            while try tokens.next() != .end {}
            return nil
        } catch let error as JSONSyntaxError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    func testValidDocumentsPass() {
        let documents = [
            ChromeHAR.json, FirefoxHAR.json, MitmproxyHAR.json, CharlesHAR.json, MalformedHAR.missingLog,
            MalformedHAR.entriesNotAnArray, MalformedHAR.statusAsString,
            #"{"a": [1, -2.5e10, 0.0, 1E-3, 1e+2, -0, true, false, null, "é \u00e9 \" \\ \/ \b\f\n\r\t", {}, [], [[]], {"b": {}}]}"#,
            " [ ] ", "\"text\"", "42", #"["\ud83d\ude00 \uD83D\uDE00"]"#,
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512), "\n{\r\n\t\"k\" : \"v\"\n}\n",
        ]
        for document in documents {
            XCTAssertNil(Self.firstError(document), document)
            XCTAssertNil(Self.firstError(document, chunkSize: 1), "one byte at a time: \(document)")
        }
    }

    func testFaultsArePlaced() {
        let cases = [
            #"{"a": 1,}"#: "unexpected '}' at line 1, column 9, expected a field name in double quotes",
            "[1 2]": "unexpected '2' at line 1, column 4, expected ',' or ']'",
            "{\"a\" 1}": "unexpected '1' at line 1, column 6, expected ':'",
            "[tru]": "unexpected ']' at line 1, column 5, expected 'true'",
            #"["\x"]"#: "unexpected 'x' at line 1, column 4, expected an escape character",
            "{}\n{}": "unexpected '{' at line 2, column 1, expected the end of the file",
            "[\"abc": "the file ends too early at line 1, column 6, inside an unclosed array",
            "[-]": "unexpected ']' at line 1, column 3, expected a digit",
            #"["a\udc00"]"#: "invalid \\u escape (lone surrogate) at line 1, column 4",
            #"["\ud800x"]"#: "invalid \\u escape (lone surrogate) at line 1, column 3",
            #"["\ud800\u0041"]"#: "invalid \\u escape (lone surrogate) at line 1, column 3",
            #"["\ud800\u00"]"#: "unexpected '\"' at line 1, column 13, expected a hex digit of a \\u escape",
            #"["\ud800"#: "invalid \\u escape (lone surrogate) at line 1, column 3",
            String(repeating: "[", count: 513): "nesting deeper than 512 levels at line 1, column 513",
            "[\"a\tb\"]": "control character (byte 9) inside a string at line 1, column 4",
            "": "the file ends too early at line 1, column 1",
            "\u{FEFF}[]": "unexpected byte 239 at line 1, column 1, expected a value",
            // Numbers as RFC 8259 has them (JSONDecoder refused these without saying where).
            "[01]": "unexpected '1' at line 1, column 3, expected ',' or ']'",
            "[1.]": "unexpected ']' at line 1, column 4, expected a digit",
            "[1e]": "unexpected ']' at line 1, column 4, expected a digit",
            "[.5]": "unexpected '.' at line 1, column 2, expected a value",
            "[1.2.3]": "unexpected '.' at line 1, column 5, expected ',' or ']'",
            "[1e400]": "the number 1e400 is out of range at line 1, column 7",
            "[" + String(repeating: "1", count: 500) + "]": "a number longer than 400 characters at line 1, column 402",
        ]
        for (document, expected) in cases {
            XCTAssertEqual(Self.firstError(document), expected, document)
            XCTAssertEqual(Self.firstError(document, chunkSize: 1), expected, "one byte at a time: \(document)")
        }
    }

    /// Strings are decoded (escapes, surrogate pairs) and can be read in any chunking; a long
    /// one is refused by `readString(limit:)` but consumed, so reading goes on after it.
    func testStringsAreDecodedAcrossChunks() throws {
        let document = #"{"k\u00e9y": "a\"b\\c\/\n\t\u0000\ud83d\ude00é", "long": ""# + String(repeating: "x", count: 100_000) + #"", "n": -1.5e3}"#
        for chunkSize in [1, 3, 64 * 1024, .max] {
            let tokens = JSONTokenizer(source: MemorySource(Data(document.utf8), chunkSize: chunkSize))
            XCTAssertEqual(try tokens.next(), .objectStart)
            XCTAssertEqual(try tokens.next(), .key)
            XCTAssertEqual(try tokens.readString(limit: 64).map { String(decoding: $0, as: UTF8.self) }, "kéy")
            XCTAssertEqual(try tokens.next(), .string)
            XCTAssertEqual(try tokens.readString(limit: 64).map { String(decoding: $0, as: UTF8.self) }, "a\"b\\c/\n\t\u{0}😀é")
            XCTAssertEqual(try tokens.next(), .key)
            XCTAssertEqual(try tokens.next(), .string, "a key left unread is skipped")
            XCTAssertNil(try tokens.readString(limit: 99_999))
            XCTAssertEqual(try tokens.next(), .key)
            XCTAssertEqual(try tokens.next(), .number)
            XCTAssertEqual(tokens.number, -1500)
            XCTAssertEqual(try tokens.next(), .objectEnd)
            XCTAssertEqual(try tokens.next(), .end)
        }
    }

    /// Nesting costs no call frames: a deep document is refused on a small stack.
    func testDeepNestingOnASmallStack() {
        let message = SmallStackThread.run { Self.firstError(String(repeating: "[{\"a\":", count: 100_000)) }
        XCTAssertEqual(message, "nesting deeper than 512 levels at line 1, column \(256 * 6 + 1)")
    }
}
