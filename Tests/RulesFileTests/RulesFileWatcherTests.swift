import Foundation
@testable import Rules
@testable import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// Live reload by polling, driven by `checkNow()`: every edit changes the file's size or inode,
/// so no test waits for the clock.
final class RulesFileWatcherTests: XCTestCase {
    private var folder: TemporaryDirectory!
    private var path: String!
    private let reports = ReportLog()

    override func setUpWithError() throws {
        folder = try TemporaryDirectory("rules-tests")
        path = folder.file("rules.yaml")
    }

    override func tearDown() {
        folder.remove()
    }

    private func rulesText(_ names: String...) -> String {
        "rules:\n" + names.map { "  - { name: \($0), match: { host: \($0).com }, block: {} }\n" }.joined()
    }

    private func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Loads the file as the CLI does and starts a watcher on it (its timer is never started).
    private func start(with text: String?) throws -> (LiveRules, RulesFileWatcher) {
        let live: LiveRules
        if let text {
            try write(text)
            live = LiveRules(try RulesFile.load(path: path), source: path)
        } else {
            live = LiveRules()
        }
        let log = reports
        let watcher = RulesFileWatcher(path: path, live: live, initialText: text.map { Data($0.utf8) },
                                       report: { log.append($0) })
        return (live, watcher)
    }

    private func names(_ live: LiveRules) -> [String] { live.current.rules.map(\.name) }

    /// The rules loaded at start stay in force while the file does not change.
    func testInitialLoad() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a"])
        XCTAssertEqual(live.status.source, path)
        XCTAssertEqual(reports.lines, [])
    }

    /// An edit is loaded on the next poll and reported in one line.
    func testEditReloads() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        try write(rulesText("a", "bb"))
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a", "bb"])
        XCTAssertEqual(reports.lines, ["rules: reloaded \(path!): 2 rules active"])
        try write(rulesText("ccc"))
        watcher.checkNow()
        XCTAssertEqual(reports.lines.last, "rules: reloaded \(path!): 1 rule active")
    }

    /// A broken edit keeps the old rules and sets the error; fixing the file clears it.
    func testBrokenEditKeepsTheOldRules() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        try write("rules: yes\n")
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a"])
        let error = "\(path!):1:8: 'rules' must be a list of rules (lines starting with '- '), not 'yes'"
        XCTAssertEqual(live.status.lastError, error)
        XCTAssertEqual(live.status.summary, "1 active, reload failed (E: log)")
        XCTAssertEqual(reports.lines, ["rules: \(path!) not reloaded, the previous rules stay in force:\n\(error)"])

        try write(rulesText("fixed"))
        watcher.checkNow()
        XCTAssertEqual(names(live), ["fixed"])
        XCTAssertNil(live.status.lastError)
        XCTAssertEqual(live.status.summary, "1 active")
        XCTAssertEqual(reports.lines.count, 2)
    }

    /// A new file renamed over the old one (as editors save) is loaded, even at the same size.
    func testRenameOverReloads() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        let temporary = try folder.write("rules.yaml.new", rulesText("b"))
        XCTAssertEqual(rename(temporary, path), 0)
        watcher.checkNow()
        XCTAssertEqual(names(live), ["b"])
        XCTAssertEqual(reports.lines, ["rules: reloaded \(path!): 1 rule active"])
    }

    /// Identical bytes in a new file are read but not parsed again: no reload, no report.
    func testIdenticalBytesAreNotReparsed() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        let loadedAt = live.status.loadedAt
        let temporary = try folder.write("rules.yaml.new", rulesText("a"))
        XCTAssertEqual(rename(temporary, path), 0)
        watcher.checkNow()
        XCTAssertEqual(reports.lines, [])
        XCTAssertEqual(live.status.loadedAt, loadedAt)
    }

    /// A removed file clears the rules only on the second poll; it is loaded again when back.
    func testRemovalClearsAfterTwoPolls() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        XCTAssertEqual(unlink(path), 0)
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a"], "one poll: an editor may be between unlink and rename")
        XCTAssertEqual(reports.lines, [])
        watcher.checkNow()
        XCTAssertEqual(names(live), [])
        XCTAssertNil(live.status.source)
        XCTAssertEqual(live.status.summary, "off")
        XCTAssertEqual(reports.lines, ["rules: \(path!) was removed: no rules are in force"])
        watcher.checkNow()
        XCTAssertEqual(reports.lines.count, 1, "said once")

        try write(rulesText("a"))
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a"])
        XCTAssertEqual(reports.lines.last, "rules: reloaded \(path!): 1 rule active")
    }

    /// A file missing for one poll and back keeps the rules in force throughout.
    func testBriefAbsenceIsNotARemoval() throws {
        let (live, watcher) = try start(with: rulesText("a"))
        XCTAssertEqual(unlink(path), 0)
        watcher.checkNow()
        try write(rulesText("a"))
        watcher.checkNow()
        XCTAssertEqual(unlink(path), 0)
        watcher.checkNow()
        XCTAssertEqual(names(live), ["a"], "the count starts again after the file came back")
        XCTAssertEqual(reports.lines, [])
    }

    /// A watcher started without a file picks the file up once it exists.
    func testFileCreatedLater() throws {
        let (live, watcher) = try start(with: nil)
        watcher.checkNow()
        watcher.checkNow()
        XCTAssertEqual(names(live), [])
        XCTAssertEqual(reports.lines, [], "no file and none before: nothing to say")
        try write(rulesText("late"))
        watcher.checkNow()
        XCTAssertEqual(names(live), ["late"])
        XCTAssertEqual(live.status.source, path)
        XCTAssertEqual(reports.lines, ["rules: reloaded \(path!): 1 rule active"])
    }
}

/// The watcher's report lines, collected from its queue.
final class ReportLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    func append(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        stored.append(line)
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
