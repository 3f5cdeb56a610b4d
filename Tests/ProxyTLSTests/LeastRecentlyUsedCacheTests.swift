import XCTest
@testable import ProxyTLS

/// The bounded dictionary under the leaf cache.
final class LeastRecentlyUsedCacheTests: XCTestCase {
    func testEvictsTheLeastRecentlyUsedEntry() {
        var cache = LeastRecentlyUsedCache<String, Int>(capacity: 3)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        cache.insert(3, for: "c")
        XCTAssertEqual(cache.value(for: "a"), 1)
        cache.insert(4, for: "d")
        XCTAssertFalse(cache.contains("b"))
        XCTAssertEqual(cache.count, 3)
        cache.insert(5, for: "e")
        XCTAssertFalse(cache.contains("c"))
        XCTAssertEqual([cache.value(for: "a"), cache.value(for: "d"), cache.value(for: "e")], [1, 4, 5])
    }

    /// Replacing a present key refreshes it without evicting anything.
    func testReplacingAnEntryEvictsNothing() {
        var cache = LeastRecentlyUsedCache<String, Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        cache.insert(10, for: "a")
        XCTAssertEqual(cache.count, 2)
        cache.insert(3, for: "c")
        XCTAssertEqual(cache.value(for: "a"), 10)
        XCTAssertNil(cache.value(for: "b"))
        cache.removeValue(for: "a")
        XCTAssertEqual(cache.count, 1)
    }
}
