import Foundation
import TestSupport
import XCTest

/// The rules file as a user meets it: the real `proxyapp run` reads `<data-dir>/rules.yml` at
/// start, reloads it on its own when edited (no test hook: the real watcher's timer), keeps the
/// old rules when an edit breaks it, and refuses to start on a broken file.
///
/// Waits poll for the event (a status, a log line), bounded only as a safety net; nothing
/// asserts on timing. Every host is under `.invalid` (RFC 6761: never resolves, and the proxy
/// answers it without asking DNS), so a request that no rule catches yet stays on loopback.
final class RulesCommandLineTests: XCTestCase {
    /// The status curl gets for `url` through the proxy.
    private func status(_ port: Int, _ url: String) async throws -> Int? {
        try await Curl.fetch(viaProxy: port, url, timeout: 10).status
    }

    /// The longest a wait for the watcher polls: a safety net for a loaded machine, never reached
    /// when the reload works.
    private static let waitBound: TimeInterval = 60

    /// Polls until `url` answers `expected` (at most `waitBound`); returns the last status seen.
    private func waitForStatus(_ port: Int, _ url: String, _ expected: Int) async throws -> Int? {
        let deadline = Date().addingTimeInterval(Self.waitBound)
        var last: Int?
        repeat {
            last = try await status(port, url)
            if last == expected { return last }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        return last
    }

    func testRunLoadsAndReloadsTheRulesFile() async throws {
        let data = try makeTemporaryDirectory("rules-cli").url
        let rulesFile = data.appendingPathComponent("rules.yml")
        try Data("rules:\n  - name: first\n    match: { host: \"*.first.invalid\" }\n    block: { status: 410 }\n".utf8)
            .write(to: rulesFile)
        let proxy = try await ProxyAppProcess.startHeadless(executable: try proxyAppExecutable(), dataDirectory: data)
        do {
            XCTAssertTrue(proxy.output.contains("Rules: 1 active from \(rulesFile.path)"), proxy.output)
            let first = try await status(proxy.port, "http://a.first.invalid/")
            XCTAssertEqual(first, 410)

            // An editor's save: a new file renamed over the old one.
            let edited = data.appendingPathComponent("rules.yml.new")
            try Data("rules:\n  - name: second\n    match: { host: \"*.second.invalid\" }\n    block: { status: 451 }\n".utf8)
                .write(to: edited)
            XCTAssertEqual(rename(edited.path, rulesFile.path), 0)
            let second = try await waitForStatus(proxy.port, "http://a.second.invalid/", 451)
            XCTAssertEqual(second, 451, proxy.output)
            XCTAssertTrue(proxy.output.contains("rules: reloaded \(rulesFile.path): 1 rule active"), proxy.output)

            // A broken edit is reported with its line and the rules in force stay.
            try Data("rules:\n  - name: third\n    match: { hots: x.test }\n    block: {}\n".utf8).write(to: rulesFile)
            let deadline = Date().addingTimeInterval(Self.waitBound)
            while !proxy.output.contains("not reloaded"), Date() < deadline {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            XCTAssertTrue(proxy.output.contains("not reloaded"),
                          "the broken edit was not reported within \(Self.waitBound) s:\n\(proxy.output)")
            XCTAssertTrue(proxy.output.contains(
                "\(rulesFile.path):3:14: rule 1 'third': unknown key 'hots' in match (did you mean 'host'?)"), proxy.output)
            let stillSecond = try await status(proxy.port, "http://a.second.invalid/")
            XCTAssertEqual(stillSecond, 451)
        } catch {
            await proxy.stop()
            throw error
        }
        let stopped = await proxy.stop()
        XCTAssertTrue(stopped)
    }

    /// A rules file that does not parse stops `run` before it listens, naming the line and
    /// the fix; so does a `--rules` file that does not exist.
    func testRunRefusesABrokenOrMissingRulesFile() async throws {
        let data = try makeTemporaryDirectory("rules-cli").url
        try Data("rules:\n  - match: { host: \"*\" }\n    map_local: { file: nowhere.json }\n".utf8)
            .write(to: data.appendingPathComponent("rules.yml"))
        do {
            let proxy = try await ProxyAppProcess.startHeadless(executable: try proxyAppExecutable(), dataDirectory: data)
            await proxy.stop()
            XCTFail("proxyapp run started with a broken rules file")
        } catch let failure as ProxyAppProcess.Failure {
            XCTAssertTrue(failure.description.contains("exit 1"), failure.description)
            XCTAssertTrue(failure.description.contains("the rules file cannot be used"), failure.description)
            XCTAssertTrue(failure.description.contains(
                "rules.yml:3:24: rule 1: map_local file '\(data.path)/nowhere.json' does not exist"), failure.description)
        }
        do {
            let proxy = try await ProxyAppProcess.startHeadless(
                executable: try proxyAppExecutable(), dataDirectory: data.appendingPathComponent("other"),
                arguments: ["--rules", data.appendingPathComponent("missing.yml").path])
            await proxy.stop()
            XCTFail("proxyapp run started with a missing --rules file")
        } catch let failure as ProxyAppProcess.Failure {
            XCTAssertTrue(failure.description.contains("no rules file at \(data.path)/missing.yml. Create it"), failure.description)
        }
    }
}
