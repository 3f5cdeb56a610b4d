import ArgumentParser
import CaptureExport
import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp export` and `proxyapp import` against captures in temporary data directories:
/// selection (filter, since, marked), files written whole or not at all, and every error naming
/// its problem and fix.
final class ExportImportCommandTests: XCTestCase {
    private let epoch = Date(timeIntervalSince1970: 1_795_341_600)  // 2026-11-22T10:00:00Z

    /// Ten flows one minute apart: even ones POST to a.test, odd ones GET from b.test; #3 and
    /// #6 (by index) are marked; index 9 is a tunnel.
    private func makeCapture() throws -> (URL, TrafficRepository, [Int64]) {
        let directory = try makeTemporaryDirectory().url
        let repository = TrafficRepository(
            database: try TrafficDatabase(path: directory.appendingPathComponent("traffic.sqlite").path))
        let flows = (0..<10).map { index -> Flow in
            var flow = Flow(
                startedAt: epoch.addingTimeInterval(Double(index) * 60), finishedAt: epoch.addingTimeInterval(Double(index) * 60 + 0.5),
                method: index % 2 == 0 ? "POST" : "GET", host: index % 2 == 0 ? "a.test" : "b.test",
                path: "/item/\(index)", requestHeaders: [HeaderField(name: "Host", value: index % 2 == 0 ? "a.test" : "b.test")],
                status: 200, reason: "OK",
                responseHeaders: [HeaderField(name: "Content-Type", value: "text/plain")],
                responseBody: CapturedBody(bytes: Data("body \(index)".utf8), size: 6),
                marked: index == 3 || index == 6)
            if index % 2 == 0 {
                flow.requestBody = CapturedBody(bytes: Data("x=\(index)".utf8), size: 3)
            }
            if index == 9 {
                flow.kind = .tunnel
                flow.method = "CONNECT"
                flow.scheme = "tcp"
                flow.port = 443
                flow.path = ""
            }
            return flow
        }
        return (directory, repository, try repository.insert(flows))
    }

    private func entries(of path: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: path)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let log = try XCTUnwrap(document["log"] as? [String: Any])
        XCTAssertEqual(log["version"] as? String, "1.2")
        return try XCTUnwrap(log["entries"] as? [[String: Any]])
    }

    private func urls(_ entries: [[String: Any]]) -> [String] {
        entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
    }

    func testExportSelectsByFilterSinceAndMarked() throws {
        let (directory, _, _) = try makeCapture()
        let out = directory.appendingPathComponent("out.har")
        func export(_ extra: [String]) throws -> [String] {
            try ExportCommand.parse(["--data-dir", directory.path, "--har", out.path] + extra).run()
            return urls(try entries(of: out))
        }
        XCTAssertEqual(try export([]).count, 10)
        XCTAssertEqual(try export(["--filter", "~d a.test & ~m POST"]),
                       ["http://a.test/item/0", "http://a.test/item/2", "http://a.test/item/4", "http://a.test/item/6", "http://a.test/item/8"])
        XCTAssertEqual(try export(["--filter", "~bs 'body [78]'"]), ["http://b.test/item/7", "http://a.test/item/8"])
        XCTAssertEqual(try export(["--marked"]), ["http://b.test/item/3", "http://a.test/item/6"])
        XCTAssertEqual(try export(["--since", "2026-11-22T10:07:00Z"]).count, 3)
        XCTAssertEqual(try export(["--since", "2026-11-22T10:07:00Z", "--filter", "!~tcp"]), ["http://b.test/item/7", "http://a.test/item/8"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path + ".partial"))
    }

    /// --redact reaches the file: a secret query value and the cookie value are gone.
    func testExportRedacts() throws {
        let directory = try makeTemporaryDirectory().url
        let repository = TrafficRepository(
            database: try TrafficDatabase(path: directory.appendingPathComponent("traffic.sqlite").path))
        try repository.insert([Flow(
            host: "a.test", path: "/?api_key=s3cr3t&q=1",
            requestHeaders: [HeaderField(name: "Cookie", value: "sid=topsecret"), HeaderField(name: "Authorization", value: "Bearer abc")],
            status: 204)])
        let out = directory.appendingPathComponent("shared.har")
        try ExportCommand.parse(["--data-dir", directory.path, "--har", out.path, "--redact"]).run()
        let text = try String(contentsOf: out, encoding: .utf8)
        for secret in ["s3cr3t", "topsecret", "Bearer abc"] {
            XCTAssertFalse(text.contains(secret), "\(secret) leaked: \(text)")
        }
        XCTAssertTrue(text.contains("REDACTED"))
        XCTAssertTrue(text.contains("q=1"), "a harmless parameter stays")
    }

    /// A file that cannot be created is a clear error and leaves nothing behind.
    func testExportToMissingDirectoryNamesTheFix() throws {
        let (directory, _, _) = try makeCapture()
        let out = directory.appendingPathComponent("missing/out.har")
        XCTAssertThrowsError(try ExportCommand.parse(["--data-dir", directory.path, "--har", out.path]).run()) { error in
            XCTAssertTrue(error is CLIError, "\(type(of: error))")
            XCTAssertTrue("\(error)".contains("cannot write \(out.path)"), "\(error)")
            XCTAssertTrue("\(error)".contains("directory exists"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path + ".partial"))
    }

    /// A symlink is written through (the link stays, its target gets the HAR); an existing
    /// regular file is replaced whole.
    func testExportWritesThroughSymlinksAndReplacesFiles() throws {
        let (directory, _, _) = try makeCapture()
        let target = directory.appendingPathComponent("real.har")
        let link = directory.appendingPathComponent("link.har")
        try Data("old".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        try ExportCommand.parse(["--data-dir", directory.path, "--har", link.path]).run()
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link.path), target.path)
        XCTAssertEqual(try entries(of: target).count, 10)
        XCTAssertFalse(FileManager.default.fileExists(atPath: link.path + ".partial"))

        try ExportCommand.parse(["--data-dir", directory.path, "--har", target.path, "--marked"]).run()
        XCTAssertEqual(try entries(of: target).count, 2)
        XCTAssertEqual(ExportDestination(path: "-").name, "stdout")
        guard case .direct = ExportDestination(path: link.path) else { return XCTFail("a symlink is written through") }
        guard case .replacing = ExportDestination(path: target.path) else { return XCTFail("a regular file is replaced") }
        guard case .direct = ExportDestination(path: "/dev/null") else { return XCTFail("a device is written through") }
    }

    func testExportArgumentsAreChecked() throws {
        for bad in [[], ["--har", "a.har", "--curl", "1"], ["--curl", "1", "--raw", "2"], ["--curl", "1", "--marked"], ["--har", ""]] {
            XCTAssertThrowsError(try ExportCommand.parse(bad), "\(bad)") { error in
                XCTAssertFalse(ExportCommand.message(for: error).isEmpty)
            }
        }
        XCTAssertThrowsError(try ExportCommand.parse(["--har", "a.har", "--forwarded"])) { error in
            XCTAssertTrue(ExportCommand.message(for: error).contains("_forwarded"), ExportCommand.message(for: error))
        }
        XCTAssertThrowsError(try ExportCommand.parse(["--har", "a.har", "--since", "yesterday"])) { error in
            XCTAssertTrue(ExportCommand.message(for: error).contains("--since"), ExportCommand.message(for: error))
        }
        let directory = try makeTemporaryDirectory().url
        XCTAssertThrowsError(try ExportCommand.parse(["--data-dir", directory.path, "--har", "x.har", "--filter", "~q ("])) { error in
            XCTAssertTrue(ExportCommand.message(for: error).hasPrefix("bad --filter expression"), ExportCommand.message(for: error))
            XCTAssertEqual(ExportCommand.exitCode(for: error), .validationFailure, "a usage error, as every bad flag")
        }
    }

    /// --curl and --raw: an unknown id and a tunnel are errors that say what to do instead.
    func testCurlAndRawErrors() throws {
        let (directory, _, ids) = try makeCapture()
        XCTAssertThrowsError(try ExportCommand.parse(["--data-dir", directory.path, "--curl", "999"]).run()) { error in
            XCTAssertTrue("\(error)".contains("no flow #999"), "\(error)")
            XCTAssertTrue("\(error)".contains("proxyapp flows"), "\(error)")
        }
        XCTAssertThrowsError(try ExportCommand.parse(["--data-dir", directory.path, "--curl", "\(ids[9])"]).run()) { error in
            XCTAssertTrue("\(error)".contains("CONNECT tunnel"), "\(error)")
            XCTAssertTrue("\(error)".contains("--raw \(ids[9])"), "\(error)")
        }
    }

    /// Export then import into another data directory: the same flows arrive, with new ids.
    func testImportOfAnExportedCapture() throws {
        let (directory, repository, _) = try makeCapture()
        let out = directory.appendingPathComponent("all.har")
        try ExportCommand.parse(["--data-dir", directory.path, "--har", out.path]).run()
        let target = try makeTemporaryDirectory().url.appendingPathComponent("fresh")
        try ImportCommand.parse(["--data-dir", target.path, "--har", out.path]).run()
        let imported = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: target.appendingPathComponent("traffic.sqlite").path))
        XCTAssertEqual(try imported.count(), 10)
        let original = try repository.latestFlows(limit: 10).reversed().map(\.url)
        XCTAssertEqual(try imported.latestFlows(limit: 10).reversed().map(\.url), original)
    }

    /// A malformed HAR is refused with the JSON path of the problem, and the store keeps
    /// exactly what it had.
    func testFailedImportChangesNothing() throws {
        let (directory, repository, _) = try makeCapture()
        let bad = directory.appendingPathComponent("bad.har")
        try Data(#"{"log":{"version":"1.2","entries":[{"startedDateTime":"2026-11-22T10:00:00Z","time":1,"request":{"method":"GET","url":"http://a.test/","httpVersion":"HTTP/1.1","headers":[]},"response":{"status":200}},{"startedDateTime":"2026-11-22T10:00:00Z","request":{"method":"GET"}}]}}"#.utf8)
            .write(to: bad)
        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", directory.path, "--har", bad.path]).run()) { error in
            XCTAssertTrue(error is CLIError, "\(type(of: error))")
            XCTAssertTrue("\(error)".contains("log.entries[1].request.url"), "\(error)")
            XCTAssertTrue("\(error)".contains("Nothing was imported"), "\(error)")
        }
        XCTAssertEqual(try repository.count(), 10)
        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", directory.path, "--har", directory.appendingPathComponent("nope.har").path]).run()) { error in
            XCTAssertTrue("\(error)".contains("no file at"), "\(error)")
        }
    }

    /// A pipe (`--har <(cmd)`, `/dev/stdin`) is read like a file; a directory is refused.
    func testImportFromAPipeAndNotFromADirectory() throws {
        let (directory, _, _) = try makeCapture()
        let fifo = directory.appendingPathComponent("har.fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo failed")
        let har = Data(#"{"log":{"entries":[{"startedDateTime":"2026-11-22T10:00:00Z","request":{"method":"GET","url":"http://pipe.test/"}}]}}"#.utf8)
        let writer = Thread {
            // Opening for writing blocks until the importer opens the read end.
            guard let handle = FileHandle(forWritingAtPath: fifo.path) else { return }
            handle.write(har)
            try? handle.close()
        }
        writer.start()
        let target = try makeTemporaryDirectory().url
        try ImportCommand.parse(["--data-dir", target.path, "--har", fifo.path]).run()
        let imported = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: target.appendingPathComponent("traffic.sqlite").path))
        XCTAssertEqual(try imported.latestFlows(limit: 10).map(\.host), ["pipe.test"])

        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", target.path, "--har", directory.path]).run()) { error in
            XCTAssertEqual("\(error)", "\(directory.path) is a directory. Give the path of a .har file (or '-' to read stdin).")
        }
    }
}
