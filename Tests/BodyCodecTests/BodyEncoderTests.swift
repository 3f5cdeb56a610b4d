import BodyCodec
import XCTest

/// Every encoding BodyEncoder produces decodes back through BodyDecoder; lists apply in order;
/// unknown encodings are refused by name.
final class BodyEncoderTests: XCTestCase {
    private let text: [UInt8] = Array(String(repeating: "<p>ProxyApp encodes bodies again.</p>\n", count: 2000).utf8)

    private func roundTrip(_ header: String, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let encoded = try BodyEncoder.encode(text, contentEncoding: header)
        XCTAssertEqual(BodyDecoder.decode(encoded, contentEncoding: header), .decoded(text), header, file: file, line: line)
        return encoded
    }

    func testEachEncodingRoundTripsThroughTheDecoder() throws {
        for header in ["gzip", "x-gzip", "deflate", "br", "zstd"] {
            let encoded = try roundTrip(header)
            XCTAssertLessThan(encoded.count, text.count / 4, "\(header) must actually compress repetitive text")
        }
    }

    /// Each wrapper is the one the header names, not just something the lenient decoder accepts.
    func testWrappersAreTheStandardOnes() throws {
        let gzip = try BodyEncoder.encode(text, contentEncoding: "gzip")
        XCTAssertEqual(Array(gzip.prefix(3)), [0x1F, 0x8B, 0x08], "gzip magic and CM = deflate")
        let deflate = try BodyEncoder.encode(text, contentEncoding: "deflate")
        XCTAssertEqual(deflate[0] & 0x0F, 8, "zlib header: CM = deflate")
        XCTAssertEqual((UInt16(deflate[0]) << 8 | UInt16(deflate[1])) % 31, 0, "zlib header check bits")
        let zstd = try BodyEncoder.encode(text, contentEncoding: "zstd")
        XCTAssertEqual(Array(zstd.prefix(4)), [0x28, 0xB5, 0x2F, 0xFD], "zstd frame magic")
    }

    /// `gzip, br`: gzip was applied first, so the outer layer is br and inside it is a gzip stream.
    func testListsApplyInHeaderOrder() throws {
        let encoded = try roundTrip("gzip, br")
        let outer = BodyDecoder.decode(encoded, contentEncoding: "br")
        XCTAssertNil(outer.note)
        XCTAssertEqual(Array(outer.bytes.prefix(2)), [0x1F, 0x8B], "inside br is a gzip stream")
        _ = try roundTrip(" Deflate ,ZSTD ")
    }

    func testIdentityAndEmptyChangeNothing() throws {
        XCTAssertEqual(try BodyEncoder.encode(text, contentEncoding: ""), text)
        XCTAssertEqual(try BodyEncoder.encode(text, contentEncoding: "identity"), text)
        XCTAssertEqual(try BodyEncoder.encode(text, contentEncoding: " , identity"), text)
    }

    func testEmptyBodiesEncodeToValidStreams() throws {
        for encoding in ContentEncoding.allCases {
            let encoded = try BodyEncoder.encode([], as: encoding)
            XCTAssertFalse(encoded.isEmpty, "\(encoding)")
            // The single-encoding decoder does not short-cut empty input: it reads the stream.
            XCTAssertEqual(try BodyDecoder.decode(encoded, as: encoding, limit: 1024), [], "\(encoding)")
        }
    }

    func testUnknownEncodingIsRefusedByName() {
        XCTAssertThrowsError(try BodyEncoder.encode(text, contentEncoding: "gzip, compress")) { error in
            XCTAssertEqual("\(error)", "cannot encode with unknown content encoding 'compress'")
        }
    }
}
