import Foundation
import TerminalUI
import TestSupport
import XCTest

@testable import ProxyAppUI

/// `LogTail` and `EventLogFeed`: the log file's last lines, bounded, never blocking on odd files.
final class EventLogFeedTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory().url
    }

    private func file(_ text: String) throws -> String {
        let path = directory.appendingPathComponent("proxyapp.log").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testWholeSmallFile() throws {
        let path = try file("one\r\ntwo\tthree\n\nfour")
        XCTAssertEqual(LogTail.read(path: path).0, .lines(["one", "two    three", "", "four"], truncated: false))
        XCTAssertEqual(LogTail.read(path: try file("")).0, .lines([], truncated: false))
    }

    /// Only the last bytes are read; the line cut by the start of the window is left out.
    func testLargeFileKeepsTheTail() throws {
        let text = (1...10_000).map { "line \($0)" }.joined(separator: "\n") + "\n"
        let path = try file(text)
        guard case .lines(let lines, let truncated) = LogTail.read(path: path, maximumBytes: 1000).0 else {
            return XCTFail("not read")
        }
        XCTAssertTrue(truncated)
        XCTAssertEqual(lines.last, "line 10000")
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("line ") && Int($0.dropFirst(5)) != nil }, "no cut line: \(lines.prefix(2))")
        XCTAssertLessThan(lines.count, 1000 / 9)

        let many = LogTail.lines(ArraySlice(Data(text.utf8)), startsMidFile: false, maximumLines: 3)
        XCTAssertEqual(many, .lines(["line 9998", "line 9999", "line 10000"], truncated: true))
    }

    func testLongLinesAndInvalidUTF8() {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000) + [0x0A, 0xFF, 0x41]
        guard case .lines(let lines, _) = LogTail.lines(ArraySlice(long), startsMidFile: false) else { return XCTFail() }
        XCTAssertEqual(lines[0].count, LogTail.maximumLineLength + 1)
        XCTAssertTrue(lines[0].hasSuffix("x…"))
        XCTAssertEqual(lines[1], "\u{FFFD}A")
    }

    /// A missing file, a directory and a FIFO (which a blocking open would wait on forever).
    func testOddFiles() throws {
        XCTAssertEqual(LogTail.read(path: directory.appendingPathComponent("none.log").path).0, .missing)
        XCTAssertEqual(LogTail.read(path: directory.path).0, .failed("not a regular file"))
        let fifo = directory.appendingPathComponent("fifo.log").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertEqual(LogTail.read(path: fifo).0, .failed("not a regular file"))
    }

    /// The feed reads on its own queue and sees lines appended later.
    func testFeedRefreshesAfterAppends() throws {
        let path = try file("first\n")
        let feed = EventLogFeed(path: path)
        XCTAssertEqual(feed.content, .loading)
        feed.refresh(force: true)
        feed.waitUntilIdle()
        XCTAssertEqual(feed.content, .lines(["first"], truncated: false))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("second\n".utf8))
        try handle.close()
        feed.refresh(force: true)
        feed.waitUntilIdle()
        XCTAssertEqual(feed.content, .lines(["first", "second"], truncated: false))
    }
}
