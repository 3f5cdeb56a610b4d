@testable import FlowExport
import XCTest

/// The locator runs before every decoding error is reported, so it must never flag valid JSON;
/// and it must place the faults it finds.
final class JSONSyntaxLocatorTests: XCTestCase {
    func testValidDocumentsPass() {
        let documents = [
            ChromeHAR.json, FirefoxHAR.json, MitmproxyHAR.json, CharlesHAR.json, MalformedHAR.missingLog,
            MalformedHAR.entriesNotAnArray, MalformedHAR.statusAsString,
            #"{"a": [1, -2.5e10, 0.0, 1E-3, true, false, null, "é \u00e9 \" \\ \/ \b\f\n\r\t", {}, [], [[]], {"b": {}}]}"#,
            " [ ] ", "\"text\"", "42", #"["\ud83d\ude00 \uD83D\uDE00"]"#,
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512), "\n{\r\n\t\"k\" : \"v\"\n}\n",
        ]
        for document in documents {
            XCTAssertNil(JSONSyntaxLocator.firstError(in: Array(document.utf8)), document)
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
            String(repeating: "[", count: 513): "nesting deeper than 512 levels at line 1, column 513",
        ]
        for (document, expected) in cases {
            XCTAssertEqual(JSONSyntaxLocator.firstError(in: Array(document.utf8)), expected, document)
        }
    }
}
