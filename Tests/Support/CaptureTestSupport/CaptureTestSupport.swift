import CaptureStore
import ProxyModel
import TestSupport
import XCTest

extension TemporaryDirectory {
    /// A new read-write capture database `name` in this directory, holding `flows`.
    public func makeRepository(_ name: String = "capture.sqlite", flows: [Flow] = []) throws -> TrafficRepository {
        let repository = TrafficRepository(database: try TrafficDatabase(path: file(name)))
        if !flows.isEmpty {
            _ = try repository.insert(flows)
        }
        return repository
    }
}

extension XCTestCase {
    /// A new read-write capture database in a temporary directory removed when the test ends:
    /// the capture tests of several targets start from one.
    public func makeRepository(_ label: String = #function) throws -> TrafficRepository {
        try makeTemporaryDirectory(label).makeRepository()
    }
}
