import ChildProcess
import Foundation
import QRCode
import TestSupport
import XCTest

/// QR codes read back by a real decoder (Debian's `zbarimg`, installed by scripts/test): the PNG
/// as written, and the terminal's half-block lines turned back into modules; bad input refused
/// in words.
final class QRCodeTests: XCTestCase {
    private static let zbarimg = "/usr/bin/zbarimg"

    /// What zbarimg reads in the PNG `bytes`.
    private func decode(_ bytes: [UInt8]) async throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Self.zbarimg) else {
            throw XCTSkip("zbarimg is missing: install Debian's zbar-tools (scripts/test does)")
        }
        let directory = try makeTemporaryDirectory("qr")
        let file = directory.url.appendingPathComponent("code.png")
        try Data(bytes).write(to: file)
        let outcome = try await ChildProcess.run(Self.zbarimg, ["--quiet", "--raw", file.path], timeout: 20)
        XCTAssertEqual(outcome.exitCode, 0, String(decoding: outcome.stderr, as: UTF8.self))
        return String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    func testPNGReadsBackAsTheURL() async throws {
        for url in ["http://192.168.1.5:8080/", "http://[fd00:1234:5678::42]:8080/", "http://10.0.0.7:65535/"] {
            let code = try QRCode(encoding: url)
            let decoded = try await decode(try QRCodePNG.data(code))
            XCTAssertEqual(decoded, url)
        }
    }

    /// The terminal lines hold exactly the modules: rebuilt from the half blocks and drawn as a
    /// PNG, the code still reads as the URL. A short URL fits an 80×24 terminal.
    func testHalfBlockLinesHoldTheCode() async throws {
        let url = "http://192.168.100.100:8080/"
        let code = try QRCode(encoding: url)
        let quiet = 2
        let lines = code.halfBlockLines(quietZone: quiet)
        let span = code.size + 2 * quiet
        XCTAssertEqual(lines.count, (span + 1) / 2)
        XCTAssertLessThanOrEqual(span, 80)
        XCTAssertLessThanOrEqual(lines.count, 24 - 5, "room for a title, two lines of text and the status line")
        var modules: [Bool] = []
        var rows: [[Bool]] = Array(repeating: [], count: lines.count * 2)
        for (index, line) in lines.enumerated() {
            XCTAssertEqual(line.count, span)
            for character in line {
                rows[2 * index].append(character == "█" || character == "▀")
                rows[2 * index + 1].append(character == "█" || character == "▄")
            }
        }
        for row in quiet..<(quiet + code.size) {
            XCTAssertFalse(rows[row].prefix(quiet).contains(true), "quiet zone")
            modules += rows[row][quiet..<(quiet + code.size)]
        }
        XCTAssertEqual(modules, code.modules)
        let rebuilt = QRCode(size: code.size, modules: modules)
        let decoded = try await decode(try QRCodePNG.data(rebuilt, scale: 4))
        XCTAssertEqual(decoded, url)
    }

    func testPNGStructure() throws {
        let bytes = try QRCodePNG.data(try QRCode(encoding: "x"), scale: 3, quietZone: 4)
        XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertEqual(String(decoding: bytes[12..<16], as: UTF8.self), "IHDR")
        let side = (21 + 8) * 3  // version 1: 21 modules
        XCTAssertEqual(Array(bytes[16..<24]), [0, 0, UInt8(side >> 8), UInt8(side & 0xFF), 0, 0, UInt8(side >> 8), UInt8(side & 0xFF)])
        XCTAssertEqual(String(decoding: bytes.suffix(8).prefix(4), as: UTF8.self), "IEND")
    }

    func testBadInputIsRefusedInWords() {
        XCTAssertThrowsError(try QRCode(encoding: "")) { error in
            XCTAssertEqual((error as? QRCode.EncodingError)?.description, "nothing to encode")
        }
        XCTAssertThrowsError(try QRCode(encoding: String(repeating: "a", count: 5_000))) { error in
            XCTAssertTrue((error as? QRCode.EncodingError)?.description.contains("too many") == true, "\(error)")
        }
    }
}
