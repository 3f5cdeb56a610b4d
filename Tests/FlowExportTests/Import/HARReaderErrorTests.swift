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

    /// A duration no exchange can have (it would overflow the store's epoch milliseconds) is
    /// refused with its path, not trapped on.
    func testDurationsOutOfRange() {
        let entry = #"{"log": {"entries": [{"startedDateTime": "2024-05-02T09:41:07Z", "#
            + #""request": {"method": "GET", "url": "http://a.test/"}, "#
        assertRefused(entry + #""time": 1e20}]}}"#, path: "log.entries[0].time",
                      reason: "1e+20 is not a duration in milliseconds")
        assertRefused(entry + #""time": 5, "timings": {"send": 0, "wait": 4e16, "receive": 1}}]}}"#,
                      path: "log.entries[0].timings.wait", reason: "4e+16 is not a duration in milliseconds")
    }

    /// Nesting deeper than JSON decoders allow is refused with its position, on a small stack
    /// (the locator used to recurse once per level and overflow it).
    func testDeepNestingIsRefusedWithoutCrashing() {
        let unclosed = SmallStackThread.run { Self.refusal(Data(repeating: UInt8(ascii: "["), count: 100_000)) }
        XCTAssertEqual(unclosed, "$: not valid JSON: nesting deeper than 512 levels at line 1, column 513")
        let closed = #"{"log":"# + String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000) + "}"
        let refusal = SmallStackThread.run { Self.refusal(Data(closed.utf8)) }
        XCTAssertEqual(refusal, "$: not valid JSON: nesting deeper than 512 levels at line 1, column 519")
    }

    func testLoneSurrogateIsPlaced() {
        let json = #"{"log": {"entries": [{"startedDateTime": "2024-05-02T09:41:07Z", "#
            + #""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "X", "value": "a\ud800b"}]}}]}}"#
        assertRefused(json, path: "$", reason: "not valid JSON: invalid \\u escape (lone surrogate) at line 1, column 157")
    }

    private static func refusal(_ data: Data) -> String {
        do {
            _ = try HARReader.flows(from: data)
            return "imported"
        } catch {
            return error.description
        }
    }
}
