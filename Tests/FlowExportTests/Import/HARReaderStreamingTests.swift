import BodyCodec
@testable import FlowExport
import Foundation
import ProxyModel
import XCTest

/// The reader streams: entries are handed on as they are read, whatever the chunks the file
/// arrives in; bodies over the limit keep their start; nothing an entry holds outside its bodies
/// may grow without bound; text the store would keep but a replay would change is refused.
final class HARReaderStreamingTests: XCTestCase {
    private static let entryStart = #"{"startedDateTime": "2024-05-02T09:41:07Z", "#

    private static func har(_ entries: [String]) -> String {
        #"{"log": {"version": "1.2", "entries": ["# + entries.map { entryStart + $0 + "}" }.joined(separator: ",\n") + "]}}"
    }

    private func read(_ json: String, limit: Int = .max, chunkSize: Int = .max) throws -> [Flow] {
        var flows: [Flow] = []
        try HARReader(maximumBodySize: limit).read(from: MemorySource(Data(json.utf8), chunkSize: chunkSize)) { flows.append($0) }
        return flows
    }

    private func refusal(_ json: String, limit: Int = .max) -> String {
        do {
            _ = try read(json, limit: limit)
            return "imported"
        } catch {
            return "\(error)"
        }
    }

    /// Every tool's file gives the same flows read whole or one byte at a time.
    func testChunkingChangesNothing() throws {
        for json in [ChromeHAR.json, FirefoxHAR.json, MitmproxyHAR.json, CharlesHAR.json] {
            XCTAssertEqual(try read(json, chunkSize: 1), try HARReader.flows(from: Data(json.utf8)))
            XCTAssertEqual(try read(json, chunkSize: 7), try HARReader.flows(from: Data(json.utf8)))
        }
    }

    /// Entries reach the caller before the rest of the file is read: a file cut off after two
    /// entries hands on those two, then fails with the syntax error.
    func testEntriesArriveBeforeTheDocumentEnds() {
        let whole = Self.har([#""request": {"method": "GET", "url": "http://a.test/1"}"#,
                              #""request": {"method": "GET", "url": "http://a.test/2"}"#])
        let cut = String(whole.dropLast(3)) + ","
        var seen: [String] = []
        XCTAssertThrowsError(try HARReader().read(from: MemorySource(Data(cut.utf8))) { seen.append($0.path) }) { error in
            XCTAssertEqual((error as? HARImportError)?.reason.hasPrefix("not valid JSON: the file ends too early"), true, "\(error)")
        }
        XCTAssertEqual(seen, ["/1", "/2"])
    }

    /// What the caller's closure throws comes out unchanged, and reading stops there.
    func testTheCallersErrorPassesThrough() {
        struct Full: Error {}
        let json = Self.har(Array(repeating: #""request": {"method": "GET", "url": "http://a.test/"}"#, count: 3))
        var count = 0
        XCTAssertThrowsError(try HARReader().read(from: MemorySource(Data(json.utf8))) { _ in
            count += 1
            if count == 2 { throw Full() }
        }) { XCTAssertTrue($0 is Full, "\($0)") }
        XCTAssertEqual(count, 2)
    }

    /// A syntax error anywhere wins over a problem found earlier in the content, as before.
    func testSyntaxErrorLaterInTheFileWins() {
        let json = #"{"log": {"entries": [{"startedDateTime": "yesterday", "request": {"method": "GET", "url": "http://a.test/"}}]}} x"#
        XCTAssertEqual(refusal(json), "$: not valid JSON: unexpected 'x' at line 1, column 113, expected the end of the file")
    }

    /// A text body over the limit keeps its first bytes, its full size, and says so.
    func testLongTextBodyIsTruncated() throws {
        let body = String(repeating: "0123456789", count: 100)
        let json = Self.har([#""request": {"method": "POST", "url": "http://a.test/", "postData": {"mimeType": "text/plain", "text": "\#(body)"}}, "response": {"status": 200, "content": {"mimeType": "text/plain", "text": "\#(body)"}}"#])
        let flow = try XCTUnwrap(try read(json, limit: 25, chunkSize: 3).first)
        for side in [flow.requestBody, flow.responseBody] {
            XCTAssertEqual(side.bytes, Data(body.utf8.prefix(25)))
            XCTAssertEqual(side.size, 1000)
            XCTAssertTrue(side.truncated)
        }
        XCTAssertEqual(flow.note, "request body truncated on import: kept 25 of 1000 bytes (--max-body-size); "
            + "response body truncated on import: kept 25 of 1000 bytes (--max-body-size)")
        let whole = try XCTUnwrap(try read(json, limit: 1000).first)
        XCTAssertEqual(whole.responseBody.bytes, Data(body.utf8))
        XCTAssertFalse(whole.responseBody.truncated)
        XCTAssertNil(whole.note)
    }

    /// Base64 bodies are cut after decoding, whether `encoding` comes before or after `text`; a
    /// gzip body is encoded again from its kept start, and `bodySize` stays the size on the wire.
    func testLongBase64AndEncodedBodiesAreTruncated() throws {
        let bytes = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let base64 = Data(bytes).base64EncodedString(options: .lineLength76Characters).replacingOccurrences(of: "\r\n", with: "\\r\\n")
        for content in [#"{"text": "\#(base64)", "encoding": "base64"}"#, #"{"encoding": "base64", "text": "\#(base64)"}"#] {
            let json = Self.har([#""request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 200, "content": \#(content)}"#])
            let flow = try XCTUnwrap(try read(json, limit: 100, chunkSize: 5).first)
            XCTAssertEqual(flow.responseBody.bytes, Data(bytes.prefix(100)))
            XCTAssertEqual(flow.responseBody.size, 3000)
            XCTAssertTrue(flow.responseBody.truncated)
        }
        let text = String(repeating: "compressible text ", count: 500)
        let gzip = Self.har([#""request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 200, "bodySize": 321, "headers": [{"name": "Content-Encoding", "value": "gzip"}], "content": {"text": "\#(text)"}}"#])
        let flow = try XCTUnwrap(try read(gzip, limit: 40).first)
        XCTAssertEqual(BodyDecoder.decode([UInt8](flow.responseBody.bytes), contentEncoding: "gzip").bytes, Array(text.utf8.prefix(40)))
        XCTAssertEqual(flow.responseBody.size, 321)
        XCTAssertTrue(flow.responseBody.truncated)
    }

    /// A cut that splits a character keeps whole characters only; invalid bytes read as U+FFFD.
    func testCutInsideACharacter() throws {
        let json = Self.har([#""request": {"method": "POST", "url": "http://a.test/", "postData": {"text": "ééé"}}"#])
        let flow = try XCTUnwrap(try read(json, limit: 3).first)
        XCTAssertEqual(String(decoding: flow.requestBody.bytes, as: UTF8.self), "é")
        XCTAssertEqual(flow.requestBody.size, 6)
    }

    /// A NUL in a URL was stored, then shown and replayed as another URL: now refused with its
    /// path, as are methods that are not tokens, control characters in header names and line
    /// breaks in one-line fields. A request header value with a LF, CR or NUL is refused too:
    /// curl sends `-H` values as they are, so a replay put `Injected: 1` on the wire as a header
    /// of its own. A folded response header value (LF, CRLF) is what exporters write for
    /// repeated `Set-Cookie`: kept; a NUL or lone CR there is not.
    func testTextAReplayWouldChangeIsRefused() {
        let cases: [(String, String)] = [
            (#""request": {"method": "GET", "url": "http://a.test/a\u0000b"}"#,
             #"log.entries[0].request.url: a control character (\x00) in the URL: a URL carries it percent-encoded"#),
            (#""request": {"method": "GET", "url": "http://a.test/\u007f"}"#,
             #"log.entries[0].request.url: a control character (\x7f) in the URL: a URL carries it percent-encoded"#),
            (#""request": {"method": "GET /x HTTP/1.1\r\nHost: evil", "url": "http://a.test/"}"#,
             "log.entries[0].request.method: 'GET /x HTTP/1.1\r\nHost: evil' is not an HTTP method (letters, digits and !#$%&'*+-.^_`|~ only)"),
            (#""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "A", "value": "1"}, {"name": "X\u001b", "value": "1"}]}"#,
             #"log.entries[0].request.headers[1].name: a control character (\x1b) in a header name"#),
            (#""request": {"method": "GET", "url": "http://a.test/", "httpVersion": "HTTP/1.1\r\nX: y"}"#,
             #"log.entries[0].request.httpVersion: a line break or NUL (\x0d) where the HTTP message has one line"#),
            (#""request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 200, "statusText": "OK\n"}"#,
             #"log.entries[0].response.statusText: a line break or NUL (\x0a) where the HTTP message has one line"#),
            (#""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "X-A", "value": "v\nInjected: 1"}]}"#,
             #"log.entries[0].request.headers[0].value: a line break or NUL (\x0a) in a header value: a replay would send what follows it as a header of its own"#),
            (#""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "A", "value": "1"}, {"name": "X-A", "value": "v\r\nInjected: 1"}]}"#,
             #"log.entries[0].request.headers[1].value: a line break or NUL (\x0d) in a header value: a replay would send what follows it as a header of its own"#),
            (#""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "X-A", "value": "v\u0000w"}]}"#,
             #"log.entries[0].request.headers[0].value: a line break or NUL (\x00) in a header value: a replay would send what follows it as a header of its own"#),
            (#""request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "a=1\u0000"}]}"#,
             #"log.entries[0].response.headers[0].value: a line break or NUL (\x00) in a header value"#),
            (#""request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "a=1\rb=2"}]}"#,
             #"log.entries[0].response.headers[0].value: a line break or NUL (\x0d) in a header value"#),
        ]
        for (entry, expected) in cases {
            XCTAssertEqual(refusal(Self.har([entry])), expected, entry)
        }
        XCTAssertEqual(refusal(Self.har([#""request": {"method": "M-SEARCH", "url": "http://a.test/", "headers": [{"name": ":authority", "value": "a.test"}]}, "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "a=1\nb=2\r\nc=3"}]}"#])), "imported")
    }

    /// Fields other than bodies share 16 MiB per entry; unknown fields are skipped unread,
    /// whatever their size; an endless list of headers is refused too.
    func testFieldsOutsideBodiesAreBounded() {
        let big = String(repeating: "x", count: HAREntryReader.maximumEntryFieldBytes + 1)
        XCTAssertEqual(refusal(Self.har([#""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "A", "value": "\#(big)"}]}"#])),
                       "log.entries[0].request.headers[0].value: more than 16 MiB of text in one entry outside its bodies")
        XCTAssertEqual(refusal(Self.har([#""_initiator": "\#(big)", "request": {"method": "GET", "url": "http://a.test/"}"#])), "imported")
        // Each element costs 64 bytes; the method and URL took the rest of the last one.
        let headers = Array(repeating: #"{"name": ""}"#, count: (16 << 20) / 64 + 1).joined(separator: ",")
        XCTAssertEqual(refusal(Self.har([#""request": {"method": "GET", "url": "http://a.test/", "headers": [\#(headers)]}"#])),
                       "log.entries[0].request.headers[262143]: more than 16 MiB of text in one entry outside its bodies")
        // The budget is per entry: two entries of 10 MiB of headers each are fine.
        let half = String(repeating: "y", count: 10 << 20)
        let entry = #""request": {"method": "GET", "url": "http://a.test/", "headers": [{"name": "A", "value": "\#(half)"}]}"#
        XCTAssertEqual(refusal(Self.har([entry, entry])), "imported")
    }

    /// Of a field named twice the first counts, as `JSONDecoder` had it.
    func testFirstOfRepeatedFieldsCounts() throws {
        let flow = try XCTUnwrap(try read(Self.har([#""request": {"method": "GET", "url": "http://a.test/first", "url": "http://a.test/second"}"#])).first)
        XCTAssertEqual(flow.path, "/first")
    }

    /// UTF-8 with a byte order mark, UTF-16 and UTF-32 of either byte order read as UTF-8 does.
    func testOtherUnicodeEncodings() throws {
        let json = Self.har([#""request": {"method": "GET", "url": "http://a.test/é😀"}"#])
        let expected = try read(json)
        let encodings: [(String.Encoding, [UInt8])] = [
            (.utf8, [0xEF, 0xBB, 0xBF]), (.utf16LittleEndian, [0xFF, 0xFE]), (.utf16BigEndian, [0xFE, 0xFF]),
            (.utf16LittleEndian, []), (.utf16BigEndian, []), (.utf32LittleEndian, []), (.utf32BigEndian, [0, 0, 0xFE, 0xFF]),
        ]
        for (encoding, bom) in encodings {
            let data = Data(bom) + json.data(using: encoding)!
            var flows: [Flow] = []
            try HARReader().read(from: MemorySource(data, chunkSize: 5)) { flows.append($0) }
            XCTAssertEqual(flows, expected, "\(encoding) \(bom)")
        }
    }
}
