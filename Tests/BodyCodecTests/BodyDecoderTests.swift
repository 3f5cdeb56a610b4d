import BodyCodec
import Compressors
import Foundation
import SeededRandom
import XCTest

/// Every encoding decodes; corrupt, truncated, unknown and bomb-sized input comes back raw with
/// a note, never a crash.
final class BodyDecoderTests: XCTestCase {
    private let text: [UInt8] = Array(String(repeating: "{\"name\": \"ProxyApp\", \"n\": 12345}\n", count: 3000).utf8)

    private func assertDecodes(_ body: [UInt8], _ header: String, file: StaticString = #filePath, line: UInt = #line) {
        let result = BodyDecoder.decode(body, contentEncoding: header)
        XCTAssertNil(result.note, "\(header): \(result.note ?? "")", file: file, line: line)
        XCTAssertEqual(result, .decoded(text), header, file: file, line: line)
    }

    func testEachEncodingDecodes() {
        assertDecodes(Compressors.gzip(text), "gzip")
        assertDecodes(Compressors.gzip(text), "x-gzip")
        assertDecodes(Compressors.deflate(text, windowBits: 15), "deflate")
        assertDecodes(Compressors.deflate(text, windowBits: -15), "deflate")  // raw deflate, as some servers send
        assertDecodes(Compressors.brotli(text), "br")
        assertDecodes(Compressors.zstd(text), "zstd")
    }

    /// `gzip, br` means gzip was applied first: br is undone first.
    func testStackedEncodingsDecodeInReverseOrder() {
        assertDecodes(Compressors.brotli(Compressors.gzip(text)), "gzip, br")
        assertDecodes(Compressors.zstd(Compressors.deflate(text, windowBits: 15)), " Deflate ,ZSTD ")
    }

    func testNothingToDecode() {
        XCTAssertEqual(BodyDecoder.decode(text, contentEncoding: nil), .decoded(text))
        XCTAssertEqual(BodyDecoder.decode(text, contentEncoding: "identity"), .decoded(text))
        XCTAssertEqual(BodyDecoder.decode([], contentEncoding: "gzip"), .decoded([]))
    }

    func testUnknownEncodingIsShownRaw() {
        let result = BodyDecoder.decode(text, contentEncoding: "compress")
        XCTAssertEqual(result.bytes, text)
        XCTAssertEqual(result.note, "unknown content encoding 'compress': shown as captured")
        XCTAssertEqual(result.reason, "unknown content encoding 'compress'", "the reason without the viewer's wording")
        XCTAssertNil(BodyDecoder.decode(text, contentEncoding: nil).reason)
    }

    func testCorruptAndTruncatedBodiesAreShownRawWithANote() {
        let encoders: [(String, ([UInt8]) -> [UInt8])] = [
            ("gzip", Compressors.gzip), ("deflate", { Compressors.deflate($0, windowBits: 15) }),
            ("br", Compressors.brotli), ("zstd", Compressors.zstd),
        ]
        for (name, encode) in encoders {
            let encoded = encode(text)
            var corrupt = encoded
            // zstd frames carry no checksum by default, so flipped literals decode to other bytes
            // undetected: break its frame header instead. The others check their streams.
            let damaged = name == "zstd" ? Array(0..<4) : Array(stride(from: corrupt.count / 3, to: corrupt.count * 2 / 3, by: 7))
            for index in damaged { corrupt[index] ^= 0x5A }
            let corrupted = BodyDecoder.decode(corrupt, contentEncoding: name)
            XCTAssertEqual(corrupted.bytes, corrupt, name)
            XCTAssertTrue(corrupted.note?.contains("corrupt \(name) body") ?? false, "\(name): \(String(describing: corrupted.note))")

            let truncated = Array(encoded.prefix(encoded.count / 2))
            let cut = BodyDecoder.decode(truncated, contentEncoding: name)
            XCTAssertEqual(cut.bytes, truncated, name)
            XCTAssertNotNil(cut.note, "\(name): a truncated stream must not pass as decoded")
        }
    }

    /// A few KB that expand to 32 MiB stop at the limit.
    func testDecompressionBombsStopAtTheLimit() {
        let zeros = [UInt8](repeating: 0, count: 32 << 20)
        for (name, bomb) in [("gzip", Compressors.gzip(zeros)), ("br", Compressors.brotli(zeros)),
                             ("zstd", Compressors.zstd(zeros))] {
            XCTAssertLessThan(bomb.count, 64 << 10, name)
            let result = BodyDecoder.decode(bomb, contentEncoding: name, limit: 1 << 20)
            XCTAssertEqual(result.bytes, bomb, name)
            XCTAssertEqual(result.note, "\(name) body decodes to more than 1048576 bytes: shown as captured")
        }
    }

    /// Random bytes under every encoding: never a trap; what cannot be decoded comes back as
    /// captured with a note, and nothing decodes past the limit. Seeded, so a failure repeats:
    /// the seed is printed before the run (a trap ends the process before any message) and in
    /// every failure; `BODYCODEC_FUZZ_SEED=<number>` replays one.
    func testRandomBytesNeverCrash() {
        var seed: UInt64 = 0x5EED_B0D1
        if let given = ProcessInfo.processInfo.environment["BODYCODEC_FUZZ_SEED"] {
            guard let number = UInt64(given) else {
                return XCTFail("BODYCODEC_FUZZ_SEED must be a whole number from 0 to 2^64-1, not '\(given)'")
            }
            seed = number
        }
        print("testRandomBytesNeverCrash: seed \(seed) (BODYCODEC_FUZZ_SEED=\(seed) replays it)")
        var generator = SeededRandom(seed: seed)
        let limit = 1 << 20
        for iteration in 0..<200 {
            let bytes = generator.bytes(Int.random(in: 1...512, using: &generator))
            for encoding in ContentEncoding.allCases {
                let replay = "seed \(seed), iteration \(iteration), \(encoding.rawValue)"
                switch BodyDecoder.decode(bytes, contentEncoding: encoding.rawValue, limit: limit) {
                case .decoded(let decoded):
                    XCTAssertLessThanOrEqual(decoded.count, limit, replay)
                case .raw(let raw, let note):
                    XCTAssertEqual(raw, bytes, "raw bytes must be the captured ones: \(replay)")
                    XCTAssertTrue(note.hasSuffix(": shown as captured"), "\(note): \(replay)")
                }
            }
        }
    }
}
