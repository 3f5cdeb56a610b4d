import Foundation
import TestSupport
import XCTest

extension XCTestCase {
    /// A fresh, existing data directory for a command under test, removed when the test ends.
    func makeDataDirectory(_ label: String = #function) throws -> URL {
        let directory = try TemporaryDirectory("proxyapp-\(label)")
        addTeardownBlock { directory.remove() }
        return directory.url
    }
}
