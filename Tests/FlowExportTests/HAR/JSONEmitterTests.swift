@testable import FlowExport
import Foundation
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
