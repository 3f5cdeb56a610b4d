import Foundation
import ProxyModel
import XCTest

/// The one JSON string escaper, in both policies: what each escapes, and that every output
/// parses back (with JSONSerialization, an independent reader) to the string that went in.
final class JSONStringEscaperTests: XCTestCase {
    private func quoted(_ string: String, _ policy: JSONStringEscaper.Policy) -> String {
        var out: [UInt8] = []
        JSONStringEscaper.appendQuoted(string, to: &out, policy: policy)
        return String(decoding: out, as: UTF8.self)
    }

    func testRequiredEscapesOnlyWhatJSONRequires() {
        let cases: [(String, String)] = [
            (#"a"b"#, #""a\"b""#),
            (#"a\b"#, #""a\\b""#),
            ("\u{8}\u{C}\n\r\t", #""\b\f\n\r\t""#),
            ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),
            ("\u{7F}/\u{85}\u{202E}", "\"\u{7F}/\u{85}\u{202E}\""),
            ("é☃🎉\u{2028}", "\"é☃🎉\u{2028}\""),
            ("", #""""#),
        ]
        for (value, expected) in cases {
            XCTAssertEqual(quoted(value, .required), expected, value.debugDescription)
        }
    }

    func testTerminalSafeAlsoEscapesWhatDrivesATerminal() {
        let cases: [(String, String)] = [
            (#"a"b\"#, #""a\"b\\""#),
            ("\u{8}\u{C}\n\r\t", #""\u0008\u000c\n\r\t""#),
            ("\u{7F}\u{80}\u{9B}\u{9F}", #""\u007f\u0080\u009b\u009f""#),
            ("\u{2028}\u{2029}\u{202A}\u{202E}\u{2066}\u{2069}", #""\u2028\u2029\u202a\u202e\u2066\u2069""#),
            // Neighbours of the escaped ranges pass through.
            ("\u{A0}\u{2027}\u{202F}\u{2065}\u{206A}é☃🎉~", "\"\u{A0}\u{2027}\u{202F}\u{2065}\u{206A}é☃🎉~\""),
        ]
        for (value, expected) in cases {
            XCTAssertEqual(quoted(value, .terminalSafe), expected, value.debugDescription)
        }
    }

    /// Every scalar below U+3000 and some beyond, one string per policy: both parse back, and the
    /// terminal-safe output holds no unsafe scalar raw.
    func testEveryScalarRoundTrips() throws {
        let scalars = (0..<0x3000).compactMap(Unicode.Scalar.init) + ["\u{FFFD}", "\u{FEFF}", "\u{10FFFF}", "😀"]
        let text = String(String.UnicodeScalarView(scalars))
        for policy in [JSONStringEscaper.Policy.required, .terminalSafe] {
            let json = "[" + quoted(text, policy) + "]"
            XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String], [text])
            if policy == .terminalSafe {
                XCTAssertFalse(json.unicodeScalars.contains(where: TerminalText.isUnsafe))
            }
        }
    }

    /// A multi-byte sequence cut at the buffer's end (a caller escaping in slices) is copied,
    /// never read past.
    func testTruncatedSequenceAtTheEndIsCopied() {
        for bytes: [UInt8] in [[0x61, 0xC2], [0x61, 0xE2, 0x80], [0xE2]] {
            var out: [UInt8] = []
            bytes.withUnsafeBufferPointer { JSONStringEscaper.appendEscaped($0, to: &out, policy: .terminalSafe) }
            XCTAssertEqual(out, bytes)
        }
    }
}
