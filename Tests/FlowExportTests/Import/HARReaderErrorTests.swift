import FlowExport
import XCTest

/// A malformed file is refused as a whole with the JSON path of the fault and a reason.
final class HARReaderErrorTests: XCTestCase {
    private func assertRefused(_ json: String, path: String, reason: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        guard let error = HARImportAssertions.importError(json, file: file, line: line) else { return }
        XCTAssertEqual(error.path, path, file: file, line: line)
        XCTAssertEqual(error.reason, reason, file: file, line: line)
        XCTAssertEqual(error.description, "\(path): \(reason)", file: file, line: line)
    }

    func testNotJSON() {
        assertRefused(MalformedHAR.notJSON, path: "$",
                      reason: "not valid JSON: unexpected '<' at line 1, column 1, expected a value")
        assertRefused(MalformedHAR.truncatedJSON, path: "$",
                      reason: "not valid JSON: the file ends too early at line 1, column 69, inside an unclosed object")
        assertRefused("", path: "$", reason: "not valid JSON: the file ends too early at line 1, column 1")
        assertRefused(MalformedHAR.missingComma, path: "$",
                      reason: "not valid JSON: unexpected '\"' at line 3, column 5, expected ',' or '}'")
        assertRefused("{\"log\": {\"entries\": [\"a\tb\"]}}", path: "$",
                      reason: "not valid JSON: control character (byte 9) inside a string at line 1, column 24")
    }

    func testMissingLog() {
        assertRefused(MalformedHAR.missingLog, path: "log", reason: "required field is missing")
    }

    func testEntriesNotAnArray() {
        assertRefused(MalformedHAR.entriesNotAnArray, path: "log.entries", reason: "expected an array, found an object")
        assertRefused(#"{"log": []}"#, path: "log", reason: "expected an object, found an array")
    }

    func testEntryWithoutRequestURL() {
        assertRefused(MalformedHAR.thirdEntryWithoutURL, path: "log.entries[2].request.url", reason: "required field is missing")
    }

    func testBadDate() {
        assertRefused(MalformedHAR.badDate, path: "log.entries[0].startedDateTime",
                      reason: "not an ISO 8601 date and time: 'Thu, 02 May 2024 09:41:07 GMT'")
    }

    func testBadBase64() {
        assertRefused(MalformedHAR.badBase64, path: "log.entries[1].response.content.text",
                      reason: "encoding is base64 but the text is not valid base64")
    }

    func testWrongTypesAndMissingNames() {
        assertRefused(MalformedHAR.statusAsString, path: "log.entries[0].response.status",
                      reason: "expected a number, found a string")
        assertRefused(MalformedHAR.headerWithoutName, path: "log.entries[0].request.headers[1].name",
                      reason: "required field is missing")
    }

    func testURLsWeCannotStore() {
        assertRefused(MalformedHAR.relativeURL, path: "log.entries[0].request.url", reason: "not an absolute URL: '/api/items'")
        assertRefused(MalformedHAR.dataURL, path: "log.entries[0].request.url",
                      reason: "unsupported URL scheme 'ftp' (http, https, ws and wss can be imported)")
        assertRefused(MalformedHAR.badPort, path: "log.entries[0].request.url", reason: "bad port '99999' in 'http://a.test:99999/'")
    }

    func testUnknownBodyEncoding() {
        assertRefused(MalformedHAR.unknownBodyEncoding, path: "log.entries[0].response.content.encoding",
                      reason: "unsupported encoding 'quoted-printable' (base64 or none)")
    }
}
