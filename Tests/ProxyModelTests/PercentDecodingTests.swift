import ProxyModel
import XCTest

/// The one percent-decoder: forms (`+` a space, malformed escapes kept, U+FFFD for non-UTF-8)
/// and paths (`+` kept, malformed escapes and non-UTF-8 refused), both on bytes.
final class PercentDecodingTests: XCTestCase {
    /// Checked against the standard library's radix-16 parser, byte by byte.
    func testHexValueOfEveryByte() {
        for byte in UInt8.min...UInt8.max {
            let oracle = UInt8(String(UnicodeScalar(byte)), radix: 16)
            XCTAssertEqual(PercentDecoding.hexValue(byte), oracle, "byte \(byte)")
        }
    }

    func testFormDecodingKeepsMalformedEscapes() {
        let cases: [(String, String)] = [
            ("a+b%20c", "a b c"),
            ("%41%4a%4A", "AJJ"),
            ("%zz%", "%zz%"),
            ("%4", "%4"),
            ("%%41", "%A"),
            ("%4+", "%4 "),
            ("100%", "100%"),
            ("%E2%82%AC", "€"),
            ("%C3", "\u{FFFD}"),
            ("%FF%41", "\u{FFFD}A"),
            ("é+%2B", "é +"),
            ("", ""),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(PercentDecoding.formDecoded(Substring(text)), expected, text)
            XCTAssertEqual(PercentDecoding.formDecoded(Array(text.utf8)[...]), expected, text)
        }
    }

    func testPathDecodingRefusesMalformedEscapesAndKeepsPlus() {
        XCTAssertEqual(PercentDecoding.pathDecoded("a+b%20c"), "a+b c")
        XCTAssertEqual(PercentDecoding.pathDecoded("%2e%2E/%2f"), "..//")
        XCTAssertEqual(PercentDecoding.pathDecoded("plain/é"), "plain/é")
        XCTAssertEqual(PercentDecoding.pathDecoded("%00"), "\u{0}")
        for refused in ["%zz", "%", "%4", "a%4/", "%%41", "%C3", "%FF", "%C0%AE"] {
            XCTAssertNil(PercentDecoding.pathDecoded(Substring(refused)), refused)
        }
    }

    func testFormPairsSplitOnBytes() {
        let pairs = PercentDecoding.formPairs(Array("a=1&&b=x=y&c&=v&".utf8))
        XCTAssertEqual(pairs.map { String(decoding: $0.name, as: UTF8.self) }, ["a", "b", "c", ""])
        XCTAssertEqual(pairs.map { $0.value.map { String(decoding: $0, as: UTF8.self) } }, ["1", "x=y", nil, "v"])
        XCTAssertTrue(PercentDecoding.formPairs([UInt8]()).isEmpty)
        // A combining mark after `&` or `=` does not glue it to the next piece, as it would for Characters.
        let marked = PercentDecoding.formPairs("a=1&\u{301}b=\u{301}2".utf8)
        XCTAssertEqual(marked.map { Substring($0.name) }, ["a", "\u{301}b"])
        XCTAssertEqual(marked.map { $0.value.map { Substring($0) } }, ["1", "\u{301}2"])
    }

    /// Every string of up to four bytes over the interesting bytes: no crash, both form
    /// entry points agree, a path is never longer decoded than encoded and
    /// is the text itself without a `%`.
    func testEveryShortInput() {
        let alphabet: [UInt8] = Array("%+4Az&".utf8) + [0xC3, 0xA9]
        var inputs: [[UInt8]] = [[]]
        for _ in 0..<4 { inputs += inputs.filter { $0.count == inputs.last!.count }.flatMap { prefix in alphabet.map { prefix + [$0] } } }
        for bytes in inputs {
            let text = String(decoding: bytes, as: UTF8.self)
            XCTAssertEqual(PercentDecoding.formDecoded(Substring(text)), PercentDecoding.formDecoded(Array(text.utf8)[...]), text)
            if let path = PercentDecoding.pathDecoded(Substring(text)) {
                XCTAssertLessThanOrEqual(path.utf8.count, text.utf8.count, text)
                if !bytes.contains(UInt8(ascii: "%")) { XCTAssertEqual(path, text) }
            }
        }
    }
}
