import CaptureStore
import CaptureTestSupport
import FlowFilter
import Foundation
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// `FlowListFeed`: counts and windows of a capture read on the feed's own queue, including flows
/// stored after it started (as by a proxy in another process).
final class FlowListFeedTests: XCTestCase {
    /// Polls `feed.latest()` until `condition` holds, for at most 10 s.
    private func waitFor(_ feed: FlowListFeed, _ condition: (FlowListFeed.Snapshot) -> Bool,
                         file: StaticString = #filePath, line: UInt = #line) -> FlowListFeed.Snapshot {
        let deadline = Date().addingTimeInterval(10)
        var snapshot = feed.latest()
        while !condition(snapshot), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            snapshot = feed.latest()
        }
        XCTAssertTrue(condition(snapshot), "condition not reached within 10 s: \(snapshot)", file: file, line: line)
        return snapshot
    }

    func testCountsWindowsAndNewFlows() throws {
        let repository = try makeRepository()
        let hosts = (0..<10).map { "h\($0).test" }
        try repository.insert(hosts.map { Flow(host: $0, status: 200) })
        let feed = FlowListFeed(repository: repository, timeZone: TimeZone(identifier: "UTC")!, pollInterval: 0.02)
        defer { feed.stop() }
        XCTAssertEqual(feed.latest().totalRows, 0, "nothing is read before start")
        feed.start()
        _ = waitFor(feed) { $0.totalRows == 10 }

        feed.request(2..<5)
        var snapshot = waitFor(feed) { $0.window?.offset == 2 }
        XCTAssertEqual(snapshot.window?.rows.map(\.host), ["h2.test", "h3.test", "h4.test"])

        // A window past the end is clamped to what exists.
        feed.request(8..<20)
        snapshot = waitFor(feed) { $0.window?.offset == 8 }
        XCTAssertEqual(snapshot.window?.rows.map(\.host), ["h8.test", "h9.test"])

        // Flows stored later (another writer) arrive with the next polls.
        try repository.insert((10..<15).map { Flow(host: "h\($0).test") })
        _ = waitFor(feed) { $0.totalRows == 15 }
        feed.request(13..<15)
        snapshot = waitFor(feed) { $0.window?.offset == 13 }
        XCTAssertEqual(snapshot.window?.rows.map(\.host), ["h13.test", "h14.test"])
        XCTAssertNil(snapshot.error)
    }

    /// A capture damaged in its middle: the feed's error, shown on the TUI's status line, names
    /// the problem in words (it showed "SQLite error 11: database disk image is malformed").
    func testADamagedCaptureIsReportedInWords() throws {
        let path = try makeTemporaryDirectory().file("traffic.sqlite")
        try DamagedCapture.make(at: path)
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let feed = FlowListFeed(repository: repository, pollInterval: 0.02)
        defer { feed.stop() }
        feed.setQuery(FlowQuery(filter: try FlowFilter(parsing: "~fts example")))  // reads the damaged index
        feed.start()
        let snapshot = waitFor(feed) { $0.error != nil }
        let error = try XCTUnwrap(snapshot.error)
        XCTAssertTrue(error.contains("damaged"), error)
        XCTAssertFalse(error.contains("SQLite error"), error)
        XCTAssertFalse(error.contains("malformed"), error)
    }

    /// Driving a `FlowListState` from the feed, as the UI loop does: it follows the tail and
    /// loads exactly the rows it shows.
    func testStateFollowsTheFeed() throws {
        let repository = try makeRepository()
        try repository.insert((0..<50).map { Flow(host: "h\($0).test") })
        let feed = FlowListFeed(repository: repository, pollInterval: 0.02)
        defer { feed.stop() }
        feed.start()
        var state = FlowListState(visibleRows: 10)
        let snapshot = waitFor(feed) { $0.totalRows == 50 }
        state.rowsAppended(newTotal: snapshot.totalRows)
        XCTAssertTrue(state.needsLoading)
        let range = state.neededRange
        XCTAssertEqual(range, 40..<50, "following the tail shows the newest rows")
        feed.request(range)
        let loaded = waitFor(feed) { $0.window?.offset == range.lowerBound }
        if let window = loaded.window { state.load(window.rows, at: window.offset) }
        XCTAssertFalse(state.needsLoading)
        XCTAssertEqual(state.row(at: 49)?.host, "h49.test")
    }

    /// The view is read newest slice first; older rows are prepended. A request made before
    /// some of them arrived names the `prepended` count it saw, and is served at the positions
    /// those rows have now.
    func testOlderSlicesArePrependedAndRequestsFollowThem() throws {
        let repository = try makeRepository()
        try repository.insert((0..<3_000).map { Flow(host: "h\($0).test") })
        let feed = FlowListFeed(repository: repository, timeZone: TimeZone(identifier: "UTC")!, pollInterval: 0.02,
                                firstSliceSize: 500)
        defer { feed.stop() }
        feed.start()
        let done = waitFor(feed) { $0.totalRows == 3_000 && !$0.scanning }
        XCTAssertEqual(done.prepended, 2_500, "the first slice was the newest 500; the rest came before them")
        XCTAssertEqual(feed.ids(at: 0..<3_000), (1...3_000).map { Int64($0) })

        // Positions 10..<20 as seen when 100 fewer rows had been prepended are 110..<120 now.
        feed.request(10..<20, prepended: done.prepended - 100)
        let loaded = waitFor(feed) { $0.window?.offset == 110 }
        XCTAssertEqual(loaded.window?.ids, (111...120).map { Int64($0) })
        XCTAssertEqual(feed.position(of: 2_999), 2_998)
        XCTAssertNil(feed.position(of: 4_000))
    }
}

