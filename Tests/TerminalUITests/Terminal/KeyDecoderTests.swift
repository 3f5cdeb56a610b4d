import XCTest
@testable import TerminalUI

final class KeyDecoderTests: XCTestCase {
    /// Every input with the keys it must give.
    private let cases: [(String, [Key])] = [
        ("q/G", [.character("q"), .character("/"), .character("G")]),
        ("é界🙂", [.character("é"), .character("界"), .character("🙂")]),
        ("\r\n\t\u{7F}\u{08}", [.enter, .enter, .tab, .backspace, .backspace]),
        ("\u{01}\u{03}\u{1A}", [.control("a"), .control("c"), .control("z")]),
        ("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D", [.up, .down, .right, .left]),
        ("\u{1B}[1;5A", [.up]),
        ("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[7~\u{1B}[4~\u{1B}[8~", [.home, .end, .home, .home, .end, .end]),
        ("\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[2~\u{1B}[Z", [.pageUp, .pageDown, .delete, .insert, .backTab]),
        ("\u{1B}OA\u{1B}OB\u{1B}OC\u{1B}OD\u{1B}OH\u{1B}OF", [.up, .down, .right, .left, .home, .end]),
        ("\u{1B}OP\u{1B}OQ\u{1B}OR\u{1B}OS", [.function(1), .function(2), .function(3), .function(4)]),
        ("\u{1B}[11~\u{1B}[15~\u{1B}[17~\u{1B}[21~\u{1B}[23~\u{1B}[24~",
         [.function(1), .function(5), .function(6), .function(10), .function(11), .function(12)]),
        ("\u{1B}[<64;10;5M\u{1B}[<65;1;1M", [.mouseWheelUp, .mouseWheelDown]),
        ("\u{1B}[<0;12;7M\u{1B}[<0;12;7m", [.mouseClick(row: 6, column: 11)]),
        // Unknown sequences vanish whole; the keys around them survive.
        ("a\u{1B}[99~b\u{1B}[?1;2cc\u{1B}OXd\u{1B}[<2;3;4Me\u{1B}[M !!f", [.character("a"), .character("b"), .character("c"),
                                                                         .character("d"), .character("e"), .character("f")]),
        // ESC followed by a printable byte: Alt plus it (the app reads Alt-x outside a prompt
        // as Escape then x); ESC before a control byte or another ESC: Escape on its own.
        ("\u{1B}x\u{1B}\u{1B}[A", [.alt("x"), .escape, .up]),
        ("\u{1B}b\u{1B}F\u{1B}\u{7F}\u{1B}\r", [.alt("b"), .alt("F"), .alt(Key.altBackspace), .escape, .enter]),
    ]

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testInvalidUTF8AndC1ControlsAreDropped() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed([0xFF, 0x61, 0xC3, 0x28, 0xC2, 0x85, 0xE0, 0x80, 0x80, 0x62]),
                       [.character("a"), .character("("), .character("b")])
    }

    func testEverySequenceInOneRead() {
        for (input, expected) in cases {
            var decoder = KeyDecoder()
            XCTAssertEqual(decoder.feed(bytes(input)), expected, "input \(input.debugDescription)")
            XCTAssertFalse(decoder.hasPending, "input \(input.debugDescription)")
        }
    }

    func testEverySequenceSplitAtEveryByteBoundary() {
        for (input, expected) in cases {
            let all = bytes(input)
            for split in 0...all.count {
                var decoder = KeyDecoder()
                let keys = decoder.feed(Array(all[..<split])) + decoder.feed(Array(all[split...]))
                XCTAssertEqual(keys, expected, "input \(input.debugDescription) split at \(split)")
            }
            var decoder = KeyDecoder()
            XCTAssertEqual(all.flatMap { decoder.feed([$0]) }, expected, "input \(input.debugDescription) byte by byte")
        }
    }

    func testLoneEscapeWaitsForTheFlush() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed([0x1B]), [])
        XCTAssertTrue(decoder.hasPending)
        XCTAssertEqual(decoder.flushPendingEscape(), [.escape])
        XCTAssertEqual(decoder.flushPendingEscape(), [])
        XCTAssertEqual(decoder.feed(Array("j".utf8)), [.character("j")])
    }

    func testTruncatedSequenceIsDroppedAtTheFlushNotTyped() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed(Array("\u{1B}[<0;1".utf8)), [])
        XCTAssertEqual(decoder.flushPendingEscape(), [])
        XCTAssertEqual(decoder.feed(Array("k".utf8)), [.character("k")])
    }

    func testEndlessSequenceIsDroppedInsteadOfBuffered() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed(Array("\u{1B}[" .utf8) + Array(repeating: UInt8(ascii: "1"), count: 100)), [])
        XCTAssertFalse(decoder.hasPending)
        XCTAssertEqual(decoder.feed(Array("z".utf8)), [.character("z")])
    }

    /// Mouse reports with absurd coordinates (pasted garbage) are dropped, not turned into clicks
    /// whose arithmetic would overflow.
    func testMouseCoordinatesAreBounded() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed(Array("\u{1B}[<0;1;9223372036854775807M".utf8)), [])
        XCTAssertEqual(decoder.feed(Array("\u{1B}[<0;10001;5M".utf8)), [])
        XCTAssertEqual(decoder.feed(Array("\u{1B}[<0;10000;5M".utf8)), [.mouseClick(row: 4, column: 9_999)])
    }
}
