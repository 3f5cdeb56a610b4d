import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp import` reads the HAR as a stream: `--max-body-size` as in `run`, and a file that
/// fails after whole chunks were stored leaves the store as it was.
final class ImportCommandTests: XCTestCase {
    private func entry(_ index: Int, url: String? = nil, body: String = "") -> String {
        #"{"startedDateTime":"2026-11-22T10:00:00Z","request":{"method":"GET","url":"\#(url ?? "http://a.test/\(index)")"},"#
            + #""response":{"status":200,"content":{"mimeType":"text/plain","text":"\#(body)"}}}"#
    }

    private func write(_ entries: [String], to url: URL) throws {
        try Data((#"{"log":{"entries":["# + entries.joined(separator: ",") + "]}}").utf8).write(to: url)
    }

    func testMaxBodySizeTruncatesLikeRun() throws {
        let directory = try makeTemporaryDirectory().url
        let har = directory.appendingPathComponent("big.har")
        try write([entry(0, body: String(repeating: "z", count: 5_000))], to: har)
        try ImportCommand.parse(["--data-dir", directory.path, "--har", har.path, "--max-body-size", "1KiB"]).run()
        let repository = try DataDirectoryOptions.parse(["--data-dir", directory.path]).openExistingCapture()
        let flow = try XCTUnwrap(try repository.latestFlows(limit: 1).first)
        XCTAssertEqual(flow.responseBody.bytes.count, 1_024)
        XCTAssertEqual(flow.responseBody.size, 5_000)
        XCTAssertTrue(flow.responseBody.truncated)
        XCTAssertEqual(try ImportCommand.parse(["--har", "x"]).maxBodySize.bytes, 16 << 20)
        XCTAssertThrowsError(try ImportCommand.parse(["--har", "x", "--max-body-size", "1GiB"])) { error in
            XCTAssertTrue(ImportCommand.message(for: error).contains("--max-body-size must be at most 512MiB"), ImportCommand.message(for: error))
        }
    }

    /// Entry 2,500 is bad: the first 2,000 were already stored in their own transaction, and are
    /// removed again; the flows stored before the import stay.
    func testFailureAfterAStoredChunkRemovesIt() throws {
        let directory = try makeTemporaryDirectory().url
        let options = try DataDirectoryOptions.parse(["--data-dir", directory.path])
        _ = try options.preparePrivateDirectory()
        let before = try TrafficRepository(database: try TrafficDatabase(path: options.databasePath)).insert([Flow(host: "kept.test")])
        let har = directory.appendingPathComponent("late-fault.har")
        try write((0..<2_600).map { entry($0, url: $0 == 2_500 ? "/relative" : nil) }, to: har)
        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", directory.path, "--har", har.path]).run()) { error in
            XCTAssertTrue("\(error)".contains("log.entries[2500].request.url: not an absolute URL"), "\(error)")
            XCTAssertTrue("\(error)".contains("Nothing was imported"), "\(error)")
        }
        let repository = try options.openExistingCapture()
        XCTAssertEqual(try repository.count(), 1)
        XCTAssertEqual(try repository.latestFlows(limit: 5).compactMap(\.id), before)
    }

    /// A file that fails before its first entry creates no capture.
    func testBadFileCreatesNothing() throws {
        let directory = try makeTemporaryDirectory().url
        let har = directory.appendingPathComponent("bad.har")
        try Data("<html>".utf8).write(to: har)
        let target = directory.appendingPathComponent("data")
        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", target.path, "--har", har.path]).run())
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }
}
