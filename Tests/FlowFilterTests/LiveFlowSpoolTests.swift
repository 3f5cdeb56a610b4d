import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// A filter evaluated on a live flow (a breakpoint, on an event loop) never reads a body that is
/// on its way to disk: `~b` and `~fts` see no text in it, and the spool is never asked.
final class LiveFlowSpoolTests: XCTestCase {
    /// A spool that counts the reads a filter would make (each one waits for the disk).
    private final class CountingSpool: BodySpool, @unchecked Sendable {
        private let lock = NSLock()
        private var reads = 0
        var readCount: Int { lock.withLock { reads } }
        func append(_ block: Data) -> Bool { true }
        func finish() {}
        func contents() -> Data {
            lock.withLock { reads += 1 }
            return Data("secretword ".utf8)
        }
        func contents(upTo limit: Int) -> Data { contents() }
    }

    func testSpooledBodiesAreNotReadByFilters() throws {
        let spool = CountingSpool()
        var body = CapturedBody()
        let block = Data(repeating: UInt8(ascii: "a"), count: CapturedBody.blockSize)
        block.withUnsafeBytes { body.append($0) }
        body.startSpooling(spool)
        var flow = Flow(method: "POST", host: "api.test", path: "/upload",
                        requestHeaders: [HeaderField(name: "Content-Type", value: "text/plain")])
        flow.requestBody = body
        XCTAssertNotNil(flow.requestBody.spool)

        XCTAssertFalse(try FlowFilter(parsing: "~fts secretword").matches(flow))
        XCTAssertFalse(try FlowFilter(parsing: "~bq secretword").matches(flow))
        XCTAssertTrue(try FlowFilter(parsing: "!~b aaa & ~fts upload").matches(flow))
        XCTAssertEqual(spool.readCount, 0)
        // The capture writer reads it: the index gets the body's start.
        XCTAssertEqual(FullTextDocument(flow).requestBody, "secretword ")
        XCTAssertEqual(spool.readCount, 1)
    }
}
