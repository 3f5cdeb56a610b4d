import XCTest

extension XCTestCase {
    /// A fresh temporary directory removed when the test ends. The one reason this target imports
    /// XCTest: registering the removal as a teardown block, which every target did for itself.
    public func makeTemporaryDirectory(_ label: String = #function) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("proxyapp-\(label)")
        addTeardownBlock { directory.remove() }
        return directory
    }
}
