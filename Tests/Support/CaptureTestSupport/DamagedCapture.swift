import CaptureStore
import Foundation
import ProxyModel
import XCTest

/// A capture damaged in its middle (a disk error, a copy cut short and patched): its header
/// reads, so it opens, and reading its flows or its full-text index fails with SQLite's
/// "malformed" error. For the tests that check such a failure reaches users in words.
public enum DamagedCapture {
    /// Writes `count` flows with enough header text to fill a few megabytes of pages and of the
    /// full-text index at `path`, then overwrites the file's middle third with a fixed pattern.
    public static func make(at path: String, flows count: Int = 3_000) throws {
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let flows = (0..<count).map { index in
            Flow(method: "GET", scheme: "https", host: "api\(index % 50).example.test", port: 443,
                 path: "/v1/items/\(index)?page=\(index % 7)",
                 requestHeaders: (0..<12).map { HeaderField(name: "X-Request-\($0)", value: "value \(index) \($0) words") },
                 status: 200, reason: "OK",
                 responseHeaders: (0..<12).map { HeaderField(name: "X-Response-\($0)", value: "answer \(index) \($0)") })
        }
        _ = try repository.insert(flows)
        try repository.checkpoint()

        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        XCTAssertGreaterThan(size, 1 << 20, "the capture is large enough to damage in its middle")
        try handle.seek(toOffset: size / 3)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size / 3)))
    }
}
