@testable import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Strings come out escaped and numbers as JSON numbers, whatever goes in.
final class JSONEmitterTests: XCTestCase {
    private func emit(_ body: (JSONEmitter) -> Void) throws -> String {
        let output = MemoryOutput()
        let json = JSONEmitter(output: output)
        body(json)
        try json.drain()
        return output.text
    }

    func testEscapesEveryControlCharacterAndParsesBack() throws {
        let original = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) }) + "é\u{2028}\u{2029}😀"
        let text = try emit { json in json.beginArray(); json.string(original); json.endArray() }
        XCTAssertFalse(text.utf8.contains { $0 < 0x20 }, "no raw control bytes")
        XCTAssertTrue(text.contains(#"\u0000\u0001"#))
        XCTAssertTrue(text.contains(#"\u2028\u2029"#))
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]
        XCTAssertEqual(parsed, [original])
    }

    /// DEL, C1 controls and bidi overrides are legal raw in JSON but would reach a terminal that
    /// shows the HAR (`export --har -`, `cat`): they are written as `\\uXXXX`, and parse back
    /// to the same string. Also across the 32 KiB slices a long body is escaped in.
    func testTerminalUnsafeCharactersAreEscaped() throws {
        let unsafe = "\u{7F}\u{80}\u{9B}\u{9F}\u{202A}\u{202E}\u{2066}\u{2069}"
        let original = "a" + unsafe + "\u{A0}\u{202F}\u{2065}\u{206A}\u{2019}é"
        let text = try emit { json in json.beginArray(); json.string(original); json.endArray() }
        XCTAssertTrue(text.contains(#"\u007f\u0080\u009b\u009f\u202a\u202e\u2066\u2069"#), text)
        XCTAssertFalse(text.unicodeScalars.contains(where: TerminalText.isUnsafe), text)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String], [original])

        for offset in 32 * 1024 - 3...32 * 1024 {
            let body = String(repeating: "x", count: offset) + "\u{202E}\u{9B}" + String(repeating: "y", count: 40_000)
            let escaped = try emit { json in json.beginArray(); json.string(utf8: Array(body.utf8)); json.endArray() }
            XCTAssertFalse(escaped.unicodeScalars.contains(where: TerminalText.isUnsafe), "split at \(offset)")
            XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String], [body])
        }
    }

    func testInvalidUTF8BytesBecomeReplacementCharacters() throws {
        let text = try emit { json in json.beginArray(); json.string(utf8: [0x61, 0xC3, 0x28, 0xFF, 0x62]); json.endArray() }
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String], ["a\u{FFFD}(\u{FFFD}b"])
    }

    func testNumbersAndCommas() throws {
        let text = try emit { json in
            json.beginObject()
            json.key("a"); json.integer(-42)
            json.key("b"); json.milliseconds(microseconds: 1_500)
            json.key("c"); json.milliseconds(microseconds: 50)
            json.key("d"); json.milliseconds(microseconds: -1000)
            json.key("e"); json.milliseconds(microseconds: 7)
            json.key("f"); json.beginArray(); json.integer(Int64.max); json.bool(false); json.endArray()
            json.key("g"); json.beginObject(); json.endObject()
            json.endObject()
        }
        XCTAssertEqual(text, #"{"a":-42,"b":1.5,"c":0.05,"d":-1,"e":0.007,"f":[9223372036854775807,false],"g":{}}"#)
    }

    func testLargeStringsAreDrainedAlongTheWay() throws {
        let output = MemoryOutput()
        let json = JSONEmitter(output: output)
        json.string(utf8: Array(repeating: UInt8(ascii: "x"), count: 200_000))
        XCTAssertGreaterThan(output.data.count, 100_000, "written before drain")
        try json.drain()
        XCTAssertEqual(output.data.count, 200_002)
    }

    func testBase64MatchesFoundation() throws {
        for count in [0, 1, 2, 3, 4, 5, 100, 49_152, 49_153, 100_001] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let text = try emit { $0.base64String(bytes) }
            XCTAssertEqual(text, "\"\(Data(bytes).base64EncodedString())\"", "\(count) bytes")
        }
    }
}
