import Foundation
import XCTest

extension XCTestCase {
    /// A fresh directory for the test's files (named after `prefix`), removed when the test ends.
    func makeScratchDirectory(_ prefix: String) throws -> URL {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: scratch) }
        return scratch
    }
}
