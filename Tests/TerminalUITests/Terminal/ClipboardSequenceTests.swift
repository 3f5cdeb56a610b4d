import Foundation
import TerminalUI
import XCTest

/// `ClipboardSequence`: OSC 52 with a base64 payload, so no copied byte reaches the terminal raw.
final class ClipboardSequenceTests: XCTestCase {
    func testSequenceIsOSC52WithBase64() throws {
        let text = Array("curl 'http://a.test/' \u{1B}[2J\u{07}\r\n".utf8)
        let sequence = try XCTUnwrap(ClipboardSequence.sequence(for: text))
        XCTAssertEqual(Array(sequence.prefix(7)), Array("\u{1B}]52;c;".utf8))
        XCTAssertEqual(sequence.last, 0x07)
        let payload = sequence.dropFirst(7).dropLast()
        XCTAssertTrue(payload.allSatisfy { (0x21...0x7E).contains($0) }, "only base64 characters between ESC ] and BEL")
        XCTAssertEqual(Data(base64Encoded: Data(payload)).map(Array.init), text)
    }

    func testEmptyAndLimit() throws {
        XCTAssertEqual(ClipboardSequence.sequence(for: []), Array("\u{1B}]52;c;\u{07}".utf8))
        let atLimit = [UInt8](repeating: 0x61, count: ClipboardSequence.limit)
        XCTAssertEqual(try XCTUnwrap(ClipboardSequence.sequence(for: atLimit)).count, 7 + (ClipboardSequence.limit + 2) / 3 * 4 + 1)
        XCTAssertNil(ClipboardSequence.sequence(for: atLimit + [0x61]), "one byte over the limit is refused")
    }
}
