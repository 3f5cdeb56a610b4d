import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// `HeaderFieldsJSONParser`, the fast reader behind `HeaderFieldsJSON.decode`: it agrees with
/// `JSONDecoder` on every document it accepts, and leaves everything else to it.
final class HeaderFieldsJSONParserTests: XCTestCase {
    private func decoderResult(_ text: String) -> [HeaderField]? {
        guard let pairs = try? JSONDecoder().decode([[String]].self, from: Data(text.utf8)),
              pairs.allSatisfy({ $0.count == 2 })
        else { return nil }
        return pairs.map { HeaderField(name: $0[0], value: $0[1]) }
    }

    func testAcceptsValidDocumentsLikeJSONDecoder() {
        let documents = [
            "[]", " [ ] ", #"[["Host","a.test"]]"#,
            #"[["Host","a.test"],["Accept","*/*"],["Accept","text/html"]]"#,
            "[ [ \"a\" , \"b\" ] ,\n\t[\"c\",\"\"] ]",
            #"[["q","\"\\\/\b\f\n\r\t"]]"#,
            #"[["u","\u0000\u001f\u00e9\u2028\u263A"]]"#,
            #"[["emoji","\ud83c\udf89 and 🎉 and é"]]"#,
            #"[["","empty name"]]"#,
        ]
        for document in documents {
            let expected = decoderResult(document)
            XCTAssertNotNil(expected, "the sample must be valid: \(document)")
            XCTAssertEqual(HeaderFieldsJSONParser.parse(document), expected, document)
            XCTAssertEqual(try HeaderFieldsJSON.decode(document), expected, document)
        }
    }

    /// Malformed documents, and shapes it does not handle, give nil (decode then asks
    /// JSONDecoder, which refuses the malformed ones with the usual error).
    func testRefusesWhatItDoesNotExpect() {
        let documents = [
            "", "[", "[[", #"[["a"]]"#, #"[["a","b","c"]]"#, #"[["a",1]]"#,
            #"[["a","b"]] x"#, #"{"a":"b"}"#, "[[\"a\",\"b\u{1}\"]]", #"[["a","\x"]]"#,
            #"[["a","\ud83c"]]"#, #"[["a","\udf89"]]"#, #"[["a","\u12"]]"#, #"[["a","unterminated]]"#,
        ]
        for document in documents {
            XCTAssertNil(HeaderFieldsJSONParser.parse(document), document)
            XCTAssertNil(decoderResult(document), "JSONDecoder must refuse it too: \(document)")
            XCTAssertThrowsError(try HeaderFieldsJSON.decode(document), document)
        }
        // Foundation's decoder tolerates a trailing comma; the fast reader leaves it to it.
        let trailingComma = #"[["a","b"],]"#
        XCTAssertNil(HeaderFieldsJSONParser.parse(trailingComma))
        XCTAssertEqual(try HeaderFieldsJSON.decode(trailingComma), [HeaderField(name: "a", value: "b")])
    }

    /// Everything the encoder writes, every control character and non-ASCII included, reads
    /// back through the fast path.
    func testReadsBackWhatTheEncoderWrites() {
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        let fields = [
            HeaderField(name: "X-Controls", value: controls), HeaderField(name: "Quote\"Back\\slash", value: "é☃🎉\u{2028}\u{7F}/"),
            HeaderField(name: "Long", value: String(repeating: "v", count: 100_000)), HeaderField(name: "", value: ""),
        ]
        XCTAssertEqual(HeaderFieldsJSONParser.parse(HeaderFieldsJSON.encode(fields)), fields)
    }
}
