import NIOCore
import XCTest
@testable import proxyapp_load

/// Where the load generator's scanner says a response ends, however the bytes are split.
final class HTTPResponseScannerTests: XCTestCase {
    private let lengthResponse = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: t\r\n\r\nhello"
    private let chunkedResponse = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
        + "5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n"

    func testContentLengthResponseEndsAfterItsBody() throws {
        XCTAssertEqual(try scanWhole(lengthResponse), .complete(status: 200, connectionClose: false))
    }

    func testChunkedResponseWithExtensionsAndTrailersEndsAfterTheLastCRLF() throws {
        XCTAssertEqual(try scanWhole(chunkedResponse), .complete(status: 200, connectionClose: false))
    }

    /// Every split point of a response gives the same outcome, and no byte of a following
    /// response is consumed.
    func testEverySplitPointGivesTheSameOutcome() throws {
        for response in [lengthResponse, chunkedResponse, "HTTP/1.1 100 Continue\r\n\r\n" + lengthResponse] {
            let bytes = Array((response + "NEXT").utf8)
            for split in 0...bytes.count - 4 {
                var scanner = HTTPResponseScanner()
                scanner.reset(bodyless: false)
                var first = ByteBuffer(bytes: bytes[..<split])
                var second = ByteBuffer(bytes: bytes[split...])
                var outcome = try scanner.scan(&first)
                if outcome == .needMoreBytes {
                    XCTAssertEqual(first.readableBytes, 0, "split at \(split)")
                    outcome = try scanner.scan(&second)
                } else {
                    XCTAssertEqual(first.readableBytes, 0, "split at \(split)")
                }
                XCTAssertEqual(outcome, .complete(status: 200, connectionClose: false), "split at \(split)")
                XCTAssertEqual(second.readableBytes, 4, "split at \(split)")
                XCTAssertEqual(second.getString(at: second.readerIndex, length: second.readableBytes), "NEXT")
            }
        }
    }

    func testChunkedBodyFedOneByteAtATime() throws {
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: false)
        let bytes = Array(chunkedResponse.utf8)
        for (offset, byte) in bytes.enumerated() {
            var buffer = ByteBuffer(bytes: [byte])
            let outcome = try scanner.scan(&buffer)
            XCTAssertEqual(buffer.readableBytes, 0)
            if offset < bytes.count - 1 {
                XCTAssertEqual(outcome, .needMoreBytes, "byte \(offset)")
            } else {
                XCTAssertEqual(outcome, .complete(status: 200, connectionClose: false))
            }
        }
    }

    func testConnectionCloseAndHTTP10() throws {
        XCTAssertEqual(try scanWhole("HTTP/1.1 404 Not Found\r\nconnection: Close\r\ncontent-length: 0\r\n\r\n"),
                       .complete(status: 404, connectionClose: true))
        XCTAssertEqual(try scanWhole("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"),
                       .complete(status: 200, connectionClose: true))
        XCTAssertEqual(try scanWhole("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"),
                       .complete(status: 200, connectionClose: false))
    }

    func testResponsesWithoutBody() throws {
        XCTAssertEqual(try scanWhole("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n"),
                       .complete(status: 204, connectionClose: false))
        XCTAssertEqual(try scanWhole("HTTP/1.1 304 Not Modified\r\n\r\n"), .complete(status: 304, connectionClose: false))
        // A 2xx reply to CONNECT has no body, whatever its headers say.
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: true)
        var buffer = ByteBuffer(string: "HTTP/1.1 200 Connection established\r\nContent-Length: 10\r\n\r\n")
        XCTAssertEqual(try scanner.scan(&buffer), .complete(status: 200, connectionClose: false))
        XCTAssertEqual(buffer.readableBytes, 0)
    }

    func testBodyUntilCloseEndsAtEndOfInput() throws {
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: false)
        var buffer = ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\nsome body")
        XCTAssertEqual(try scanner.scan(&buffer), .needMoreBytes)
        XCTAssertEqual(try scanner.endOfInput(), .complete(status: 200, connectionClose: true))
    }

    func testEndOfInputInsideAResponseIsAnError() throws {
        XCTAssertThrowsError(try endOfInput(after: "")) { XCTAssertEqual($0 as? HTTPResponseScanner.ScanError, .closedBeforeResponse) }
        XCTAssertThrowsError(try endOfInput(after: "HTTP/1.1 200 OK\r\nCont")) {
            XCTAssertEqual($0 as? HTTPResponseScanner.ScanError, .truncatedHead)
        }
        XCTAssertThrowsError(try endOfInput(after: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel")) {
            XCTAssertEqual($0 as? HTTPResponseScanner.ScanError, .truncatedBody)
        }
    }

    func testMalformedResponsesAreRejected() {
        let cases: [(String, HTTPResponseScanner.ScanError)] = [
            ("HTTP/2 200 OK\r\n\r\n", .malformedStatusLine),
            ("HTTP/1.1 2x0 OK\r\n\r\n", .malformedStatusLine),
            ("HTTP/1.1 200OK\r\n\r\n", .malformedStatusLine),
            ("SSH-2.0-OpenSSH\r\n\r\n", .malformedStatusLine),
            ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", .malformedHeaderLine),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .invalidContentLength),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .malformedChunk),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX", .malformedChunk),
        ]
        for (response, expected) in cases {
            XCTAssertThrowsError(try scanWhole(response), response) {
                XCTAssertEqual($0 as? HTTPResponseScanner.ScanError, expected, response)
            }
        }
    }

    func testHeadLargerThanTheLimitIsRejected() {
        let filler = String(repeating: "X-Filler: \(String(repeating: "a", count: 1000))\r\n", count: 70)
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: false)
        var start = ByteBuffer(string: "HTTP/1.1 200 OK\r\n")
        var rest = ByteBuffer(string: filler)
        XCTAssertEqual(try scanner.scan(&start), .needMoreBytes)
        XCTAssertThrowsError(try scanner.scan(&rest)) { XCTAssertEqual($0 as? HTTPResponseScanner.ScanError, .headTooLarge) }
    }

    /// After `reset` the scanner reads the next response from scratch.
    func testResetReadsTheNextResponse() throws {
        var scanner = HTTPResponseScanner()
        for status in [200, 503] {
            scanner.reset(bodyless: false)
            var buffer = ByteBuffer(string: "HTTP/1.1 \(status) X\r\nContent-Length: 2\r\n\r\nok")
            XCTAssertEqual(try scanner.scan(&buffer), .complete(status: status, connectionClose: false))
        }
    }

    private func scanWhole(_ response: String) throws -> HTTPResponseScanner.Outcome {
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: false)
        var buffer = ByteBuffer(string: response)
        let outcome = try scanner.scan(&buffer)
        XCTAssertEqual(buffer.readableBytes, 0, "bytes left over: \(response)")
        return outcome
    }

    private func endOfInput(after bytes: String) throws -> HTTPResponseScanner.Outcome {
        var scanner = HTTPResponseScanner()
        scanner.reset(bodyless: false)
        var buffer = ByteBuffer(string: bytes)
        XCTAssertEqual(try scanner.scan(&buffer), .needMoreBytes)
        return try scanner.endOfInput()
    }
}
