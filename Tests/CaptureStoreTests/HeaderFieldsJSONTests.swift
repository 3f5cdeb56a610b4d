import CaptureTestSupport
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

final class HeaderFieldsJSONTests: XCTestCase {
    /// The stored form is an array of [name, value] pairs in order, duplicates kept.
    func testEncodesPairsInOrder() {
        let fields = [HeaderField(name: "Host", value: "a.test"), HeaderField(name: "Accept", value: "*/*"),
                      HeaderField(name: "Accept", value: "text/html")]
        XCTAssertEqual(HeaderFieldsJSON.encode(fields),
                       #"[["Host","a.test"],["Accept","*/*"],["Accept","text/html"]]"#)
        XCTAssertEqual(HeaderFieldsJSON.encode([]), "[]")
    }

    /// `append` (the capture writer's path, into a row's text buffer) writes exactly what `encode`
    /// returns, after whatever the buffer held, and keeps that.
    func testAppendWritesWhatEncodeReturnsAfterTheBuffersBytes() {
        let lists: [[HeaderField]] = [
            [], [HeaderField(name: "Host", value: "a.test")],
            [HeaderField(name: "\"", value: "\u{8}\\\u{1}é 😀"), HeaderField(name: "Accept", value: "")],
        ]
        for fields in lists {
            var buffer = Array("before".utf8)
            HeaderFieldsJSON.append(fields, to: &buffer)
            XCTAssertEqual(String(decoding: buffer, as: UTF8.self), "before" + HeaderFieldsJSON.encode(fields))
        }
    }

    /// Names and values are escaped with the `.required` policy (`JSONStringEscaperTests`):
    /// short escapes, DEL and U+2028 raw.
    func testEscapesWhatJSONRequiresOnly() {
        XCTAssertEqual(HeaderFieldsJSON.encode([HeaderField(name: "\"", value: "\u{8}\\\u{1}\u{7F}\u{2028}é")]),
                       "[[\"\\\"\",\"\\b\\\\\\u0001\u{7F}\u{2028}é\"]]")
    }

    /// What the encoder writes parses with JSONSerialization and decodes back to the same list.
    func testOutputParsesAndRoundTrips() throws {
        var fields = Samples.fullHTTP.requestHeaders + Samples.fullHTTP.responseHeaders
        // Every control character and a long value.
        fields.append(HeaderField(name: "X-All-Controls",
                                  value: String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })))
        fields.append(HeaderField(name: "X-Long", value: String(repeating: "ab\"\\c", count: 2000)))
        let json = HeaderFieldsJSON.encode(fields)

        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String]]
        XCTAssertEqual(parsed?.map { HeaderField(name: $0[0], value: $0[1]) }, fields)
        XCTAssertEqual(try HeaderFieldsJSON.decode(json), fields)
        XCTAssertEqual(try HeaderFieldsJSON.decode("[]"), [])
    }

    /// Stored text that is not a list of pairs is an error, not a crash or a silent empty list.
    func testDecodeRejectsMalformedText() {
        for text in ["", "{}", "[[\"only-name\"]]", "[[\"a\",\"b\",\"c\"]]", "[[1,2]]", "[[\"a\",\"b\"]"] {
            XCTAssertThrowsError(try HeaderFieldsJSON.decode(text), "accepted \(text)") { error in
                guard case .malformedRow = error as? CaptureStoreError else {
                    return XCTFail("unexpected error \(error)")
                }
            }
        }
    }
}
