@testable import FlowExport
import Foundation
import XCTest

/// Streamed base64 accepts what `Data(base64Encoded:)` accepted of whitespace-stripped text
/// (padding only at the very end), in any chunking, and keeps only `limit` decoded bytes.
final class Base64StreamDecoderTests: XCTestCase {
    private func decode(_ text: String, limit: Int = .max, chunk: Int = .max) -> (bytes: [UInt8], count: Int64)? {
        var decoder = Base64StreamDecoder(limit: limit)
        let bytes = Array(text.utf8)
        var start = 0
        repeat {
            let end = min(bytes.count, start + max(1, min(chunk, bytes.count)))
            bytes[start..<end].withUnsafeBufferPointer { decoder.append($0) }
            start = end
        } while start < bytes.count
        return decoder.isComplete ? (decoder.bytes, decoder.decodedCount) : nil
    }

    func testAcceptsWhatFoundationAccepted() {
        let cases: [(String, [UInt8]?)] = [
            ("", []), ("QQ==", [65]), ("QUI=", [65, 66]), ("QUJD", [65, 66, 67]), ("QUJDRA==", [65, 66, 67, 68]),
            ("QR==", [65]), ("QU\r\nJD\t RA==\n", [65, 66, 67, 68]),
            ("QQ=", nil), ("QQ", nil), ("Q", nil), ("Q===", nil), ("=QQ=", nil), ("QQ==QQ==", nil), ("QQ===", nil),
            ("QU=I", nil), ("QUJD!", nil), ("QUJDé", nil),
        ]
        for (text, expected) in cases {
            for chunk in [1, 2, 3, .max] {
                XCTAssertEqual(decode(text, chunk: chunk)?.bytes, expected, "\(text.debugDescription) in chunks of \(chunk)")
            }
            if let expected, !text.contains("QR==") {
                XCTAssertEqual(Data(base64Encoded: text.filter { !$0.isWhitespace }).map(Array.init), expected, text)
            }
        }
    }

    func testKeepsOnlyTheLimitAndCountsTheRest() throws {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let result = try XCTUnwrap(decode(Data(bytes).base64EncodedString(), limit: 10, chunk: 7))
        XCTAssertEqual(result.bytes, Array(bytes.prefix(10)))
        XCTAssertEqual(result.count, 1000)
    }
}
