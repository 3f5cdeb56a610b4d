import Compressors
import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `BodyDocument`: decoding by Content-Encoding, mode detection, JSON pretty-printing, form
/// fields, and the summary line for truncated, corrupt and empty bodies.
final class BodyDocumentTests: XCTestCase {
    private func document(_ bytes: [UInt8], type: String? = nil, encoding: String? = nil, size: Int64? = nil,
                          truncated: Bool = false) -> BodyDocument {
        var headers: [HeaderField] = []
        if let type { headers.append(HeaderField(name: "Content-Type", value: type)) }
        if let encoding { headers.append(HeaderField(name: "content-encoding", value: encoding)) }
        let body = CapturedBody(bytes: Data(bytes), size: size ?? Int64(bytes.count), truncated: truncated)
        return BodyDocument(body: body, headers: headers)
    }

    private func document(_ text: String, type: String? = nil) -> BodyDocument {
        document(Array(text.utf8), type: type)
    }

    private func allLines(_ lines: BodyLines) -> [String] {
        (0..<lines.count).map { lines.line($0) }
    }

    func testDecodesEachContentEncoding() {
        let original = Array(String(repeating: "hello, world\n", count: 100).utf8)
        let cases: [(String, [UInt8], String)] = [
            ("gzip", Compressors.gzip(original), "gzip"),
            ("x-gzip", Compressors.gzip(original), "gzip"),
            ("deflate", Compressors.deflate(original, windowBits: 15), "deflate"),
            ("deflate", Compressors.deflate(original, windowBits: -15), "deflate"),
            ("br", Compressors.brotli(original), "br"),
            ("zstd", Compressors.zstd(original), "zstd"),
        ]
        for (header, encoded, name) in cases {
            let body = document(encoded, type: "text/plain", encoding: header)
            XCTAssertEqual(body.bytes, original, header)
            XCTAssertEqual(body.detectedMode, .text, header)
            XCTAssertEqual(body.lines(.text).count, 100, header)
            XCTAssertEqual(body.lines(.text).line(99), "hello, world", header)
            XCTAssertEqual(body.summary, "text/plain · \(encoded.count) B (\(name), 1.3 KiB decoded)", header)
        }
    }

    func testPrettyPrintsGzippedJSONExactly() {
        let body = document(Compressors.gzip(Array(DetailFixtures.json.utf8)), type: "application/json; charset=utf-8",
                            encoding: "gzip")
        XCTAssertEqual(body.detectedMode, .json)
        XCTAssertEqual(body.availableModes, [.json, .text, .hex])
        XCTAssertEqual(allLines(body.lines(.json)).joined(separator: "\n"), DetailFixtures.prettyJSON)
        XCTAssertEqual(allLines(body.lines(.text)), [DetailFixtures.json], "text shows the bytes as sent")
    }

    func testJSONKeepsTokensAndOnlyChangesWhitespace() {
        let cases: [(String, String)] = [
            ("{}", "{}"),
            (" [ ] ", "[]"),
            ("[{},[],{\"a\":{}}]", "[\n  {},\n  [],\n  {\n    \"a\": {}\n  }\n]"),
            ("{\"a\" : [ 1 , -0.5E+10 , 0 , 1e-7 , 12345678901234567890 ] , \"a\" : 1.50}",
             "{\n  \"a\": [\n    1,\n    -0.5E+10,\n    0,\n    1e-7,\n    12345678901234567890\n  ],\n  \"a\": 1.50\n}"),
            ("{\"k}\\\"{[\":\"\\u00e9\\n\\\\\",\"é\":\"日本\"}", "{\n  \"k}\\\"{[\": \"\\u00e9\\n\\\\\",\n  \"é\": \"日本\"\n}"),
            ("\n[true,false,null]\r\n", "[\n  true,\n  false,\n  null\n]"),
        ]
        for (input, expected) in cases {
            let body = document(input, type: "application/json")
            XCTAssertEqual(body.availableModes.first, .json, input)
            XCTAssertEqual(allLines(body.lines(.json)).joined(separator: "\n"), expected, input)
        }
    }

    func testInvalidJSONFallsBackToText() {
        let invalid = [
            "{\"a\":1,}", "{\"a\" 1}", "[1 2]", "{\"a\":01}", "{\"a\":1}x", "\"unterminated", "{\"a\":tru}", "[1,]",
            "{\"a\":\"\\x\"}", "{\"a\":\"raw\nnewline\"}", "{", "{\"a\":1}}", "[1}", "{1:2}", "[-]", "[1.]", "[1e]",
            "[\"\\u12g4\"]", "",
        ]
        for input in invalid {
            let body = document(input, type: "application/json")
            XCTAssertEqual(body.availableModes, [.text, .hex], input)
            XCTAssertEqual(body.detectedMode, .text, input)
            XCTAssertEqual(allLines(body.lines(.json)), allLines(body.lines(.text)), "json falls back to text: \(input)")
            if !input.isEmpty { XCTAssertTrue(body.summary.hasSuffix(" · not valid JSON"), body.summary) }
        }
    }

    func testSniffsJSONWithoutAContentType() {
        XCTAssertEqual(document("  {\"a\":[1]}").detectedMode, .json)
        XCTAssertEqual(document("[1, 2").detectedMode, .text, "not JSON after all: text, no note")
        XCTAssertEqual(document("[1, 2").summary, "5 B")
        XCTAssertEqual(document("{\"a\":1}", type: "text/plain").detectedMode, .json)
    }

    func testFormFieldsArePercentDecoded() {
        let body = document("user=alice&password=s%C3%A9cret+%26+more&empty=&flag&&bad=%zz%4&tab=a%09b&a=b=c",
                            type: "application/x-www-form-urlencoded")
        XCTAssertEqual(body.detectedMode, .form)
        XCTAssertEqual(body.availableModes, [.form, .text, .hex])
        XCTAssertEqual(allLines(body.lines(.form)), [
            "user: alice", "password: sécret & more", "empty: ", "flag", "bad: %zz%4", "tab: a  b", "a: b=c",
        ])
        XCTAssertEqual(allLines(document("a=1", type: "text/plain").lines(.form)), ["a=1"], "no form mode: text")
    }

    func testHexLinesByArithmeticWithAPartialLastLine() {
        let bytes = Array("Hello, world!\n".utf8) + [0x00, 0x01, 0x02, 0x03, 0xFF, 0x7F]
        let body = document(bytes)
        XCTAssertEqual(body.detectedMode, .hex, "a NUL byte: binary")
        let hex = body.lines(.hex)
        XCTAssertEqual(hex.count, 2)
        XCTAssertEqual(hex.line(0), "00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 0a 00 01  |Hello, world!...|")
        XCTAssertEqual(hex.line(1), "00000010  02 03 ff 7f" + String(repeating: " ", count: 39) + "|....|")
        XCTAssertEqual(hex.line(0).count, hex.line(1).count + 12, "the ASCII column starts at the same place")
        XCTAssertEqual(hex.line(2), "")
        XCTAssertEqual(hex.line(-1), "")
        XCTAssertEqual(document([UInt8](repeating: 0x41, count: 32)).lines(.hex).count, 2, "whole lines only")
        XCTAssertEqual(document([UInt8](repeating: 0x41, count: 33)).lines(.hex).count, 3)
    }

    func testTextLinesDecodeUTF8ExpandTabsAndStripCR() {
        let bytes = Array("line one\r\nab\tc\t|\n\nbad ".utf8) + [0xFF] + Array(" byte\n".utf8)
        let body = document(bytes, type: "text/plain")
        XCTAssertEqual(body.detectedMode, .text, "declared text wins over the sniff")
        XCTAssertEqual(allLines(body.lines(.text)), ["line one", "ab  c   |", "", "bad \u{FFFD} byte"])
        XCTAssertEqual(document(bytes).detectedMode, .hex, "undeclared and not UTF-8: hex")
        XCTAssertEqual(allLines(document("no newline at the end").lines(.text)), ["no newline at the end"])
        XCTAssertEqual(allLines(document("\n\n").lines(.text)), ["", ""])
    }

    func testLongLinesAreCutAtCharacterBoundaries() {
        let text = String(repeating: "é", count: 20_000)  // 40,000 bytes on one line
        let lines = allLines(document(text, type: "text/plain").lines(.text))
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines.joined(), text, "nothing lost or replaced at the cuts")
        XCTAssertTrue(lines.allSatisfy { $0.utf8.count <= 16 * 1024 })
    }

    func testTruncatedBodySaysSo() {
        let stored = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        let body = document(stored, type: "text/plain", size: 3_565_158, truncated: true)
        XCTAssertEqual(body.summary, "text/plain · 3.4 MiB · truncated: 1.0 MiB of 3.4 MiB stored")
    }

    func testCorruptBodyIsShownAsCapturedWithTheDecodersNote() {
        let body = document(Array("not gzip at all".utf8), type: "text/plain", encoding: "gzip")
        XCTAssertEqual(body.bytes, Array("not gzip at all".utf8))
        XCTAssertEqual(allLines(body.lines(.text)), ["not gzip at all"])
        XCTAssertTrue(body.summary.hasPrefix("text/plain · 15 B · decoding failed: corrupt gzip body"), body.summary)
        XCTAssertTrue(document([1, 2, 3], encoding: "snappy").summary.contains("decoding failed: unknown content encoding 'snappy'"))
    }

    func testEmptyBody() {
        let body = document([UInt8](), type: "application/json")
        XCTAssertEqual(body.summary, "empty")
        XCTAssertEqual(body.lines(.text).count, 0)
        XCTAssertEqual(body.lines(.hex).count, 0)
    }

    /// A 10 MiB body: line counts from the index, any line on demand; JSON past the
    /// pretty-printing limit is offered as text with a note.
    func testTenMebibyteBodies() {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10 << 20)
        var number = 0
        while bytes.count + 16 <= 10 << 20 {
            let digits = String(number)
            bytes += Array("line ".utf8) + Array(String(repeating: "0", count: 10 - digits.count).utf8) + Array(digits.utf8)
            bytes.append(UInt8(ascii: "\n"))
            number += 1
        }
        let body = document(bytes, type: "application/json")
        XCTAssertEqual(body.availableModes, [.text, .hex])
        XCTAssertEqual(bytes.count, 10 << 20)
        XCTAssertEqual(body.summary, "application/json · 10.0 MiB · not pretty-printed: over 8.0 MiB")
        let text = body.lines(.text)
        XCTAssertEqual(text.count, number)
        XCTAssertEqual(text.line(412_345), "line 0000412345")
        XCTAssertEqual(body.lines(.hex).count, (bytes.count + 15) / 16)
        XCTAssertEqual(body.lines(.hex).line(1), "00000010  6c 69 6e 65 20 30 30 30  30 30 30 30 30 30 31 0a  |line 0000000001.|")
        XCTAssertEqual(body.lines(.hex).line(number - 1).suffix(18), "|line 0000655359.|")

        let oneLine = document([UInt8](repeating: UInt8(ascii: "x"), count: 10 << 20), type: "text/plain")
        XCTAssertEqual(oneLine.lines(.text).count, 640, "cut every 16 KiB")
        XCTAssertEqual(oneLine.lines(.text).line(639).count, 16 * 1024)
    }
}
