import ProxyModel
import XCTest

/// The one escaper for text printed to a terminal: every control and bidi character shown
/// visibly, everything else untouched.
final class TerminalTextTests: XCTestCase {
    func testUnsafeScalarsAreExactlyControlsAndBidiOverrides() {
        let unsafe = (0..<0x3000).compactMap(Unicode.Scalar.init).filter(TerminalText.isUnsafe).map(\.value)
        let expected = Array(0..<0x20) + Array(0x7F...0x9F) + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        XCTAssertEqual(unsafe, expected.map(UInt32.init))
        for safe: Unicode.Scalar in [" ", "~", "\u{A0}", "é", "\u{2028}", "\u{200F}", "\u{FFFD}", "😀"] {
            XCTAssertFalse(TerminalText.isUnsafe(safe), "\(safe.value)")
        }
    }

    /// The attacks seen: a clipboard write (OSC 52), a screen clear, a window title, a C1 CSI,
    /// a right-to-left override.
    func testHostileSequencesAreShownEscaped() {
        XCTAssertEqual(TerminalText.escaped("a\u{1B}]52;c;ZXZpbA==\u{7}b"), #"a\x1b]52;c;ZXZpbA==\x07b"#)
        XCTAssertEqual(TerminalText.escaped("\u{1B}[2J\u{1B}]0;pwned\u{7}"), #"\x1b[2J\x1b]0;pwned\x07"#)
        XCTAssertEqual(TerminalText.escaped("x\u{9B}2Jy\u{7F}\u{0}"), #"x\u{9B}2Jy\x7f\x00"#)
        XCTAssertEqual(TerminalText.escaped("invoice\u{202E}fdp.exe"), #"invoice\u{202E}fdp.exe"#)
        XCTAssertEqual(TerminalText.escaped("\u{2066}a\u{2069}"), #"\u{2066}a\u{2069}"#)
        XCTAssertEqual(TerminalText.escaped("line\nnext\ttab\r\n"), #"line\x0anext\x09tab\x0d\x0a"#)
    }

    func testSafeTextIsUnchanged() {
        for text in ["", "GET", "https://例え.テスト/パス?q=1", "e\u{301}", "a\\x1b", "👩‍👩‍👧", "\u{FFFD}"] {
            XCTAssertEqual(TerminalText.escaped(text), text)
            XCTAssertEqual(TerminalText.escaped(text, keepingLineBreaks: true), text)
        }
    }

    /// Multi-line output keeps LF, tab and CRLF; a lone CR (which would let a line overwrite
    /// what was printed before it) and everything else is escaped.
    func testKeepingLineBreaks() {
        XCTAssertEqual(TerminalText.escaped("HTTP/1.1 200 OK\r\nA: b\tc\r\n\r\nbody\n", keepingLineBreaks: true),
                       "HTTP/1.1 200 OK\r\nA: b\tc\r\n\r\nbody\n")
        XCTAssertEqual(TerminalText.escaped("safe\rEVIL\u{1B}[K\r", keepingLineBreaks: true), #"safe\x0dEVIL\x1b[K\x0d"#)
        XCTAssertEqual(TerminalText.escaped("\r\r\n", keepingLineBreaks: true), "\\x0d\r\n")
    }

    /// Whatever goes in, nothing unsafe comes out.
    func testNothingUnsafeSurvivesRandomText() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Unicode.Scalar] = ["a", "\n", "\r", "\t", "\u{1B}", "\u{7}", "\u{7F}", "\u{85}", "\u{9B}", "\u{202E}",
                                          "\u{2069}", "é", "\u{301}", "\\"]
        for _ in 0..<500 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0..<40, using: &generator) { text.append(alphabet.randomElement(using: &generator)!) }
            let plain = TerminalText.escaped(String(text))
            XCTAssertFalse(plain.unicodeScalars.contains(where: TerminalText.isUnsafe), plain.debugDescription)
            let lines = TerminalText.escaped(String(text), keepingLineBreaks: true)
            XCTAssertFalse(lines.unicodeScalars.contains { TerminalText.isUnsafe($0) && !["\n", "\t", "\r"].contains($0) })
            let scalars = Array(lines.unicodeScalars)
            for index in scalars.indices where scalars[index] == "\r" {
                XCTAssertTrue(index + 1 < scalars.count && scalars[index + 1] == "\n", "a lone CR in \(lines.debugDescription)")
            }
        }
    }
}
