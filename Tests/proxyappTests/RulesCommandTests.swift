import ArgumentParser
import Foundation
import Rules
import RulesFile
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp rules check|list`, `--rules` and what `run` makes of the rules file at start.
final class RulesCommandTests: XCTestCase {
    private let sample = """
        rules:
          - name: No ads
            match: { host: ["*.ads.test", ads.test], port: 80, method: [GET, HEAD] }
            block: {}
          - enabled: false
            match: { host: api.test, path: /v1/* }
            map_remote: { to: "https://staging.test/v2", preserve_host: true }
          - name: debug
            match: { host: "*" }
            rewrite: { request_headers: { set: { X-Debug: "1" }, remove: [Cookie] }, response_body: [ { find: a, replace: b } ] }
        ssl_proxying:
          exclude: ["*.apple.com"]
        """

    /// The table shows every rule in order with its line, what it matches and what it does.
    func testRuleTable() throws {
        let rules = try RulesFile.parse(sample, file: "rules.yml", baseDirectory: "/")
        XCTAssertEqual(RuleTable.render(rules), """
            1. No ads  [line 2]
               match: host *.ads.test | ads.test, port 80, method GET | HEAD
               then:  block with 403
            2. map_remote #2  (disabled)  [line 5]
               match: host api.test, path /v1/*
               then:  map_remote to https://staging.test/v2 (Host kept)
            3. debug  [line 8]
               match: host *
               then:  rewrite request headers (set X-Debug; remove Cookie), response body (1 replacement)
            ssl_proxying: decrypt: every host; never: *.apple.com

            """)
        XCTAssertEqual(RuleTable.render(.empty), "No rules.\nssl_proxying: decrypt: every host\n")
    }

    /// `rules check` takes a file argument, else --rules, else the data directory's rules.yml;
    /// a file with errors fails naming how many.
    func testCheckFindsTheFileAndFailsOnErrors() throws {
        let data = try makeTemporaryDirectory().url
        let good = data.appendingPathComponent("rules.yml")
        try Data(sample.utf8).write(to: good)
        XCTAssertNoThrow(try RulesCommand.Check.parse(["--data-dir", data.path]).run())

        let bad = data.appendingPathComponent("bad.yml")
        try Data("rules:\n  - match: { host: \"a b\" }\n    block: {}\n  - match: {}\n    dns: {}\n".utf8).write(to: bad)
        for arguments in [[bad.path, "--data-dir", data.path], ["--rules", bad.path, "--data-dir", data.path]] {
            XCTAssertThrowsError(try RulesCommand.Check.parse(arguments).run()) { error in
                XCTAssertEqual("\(error)", "3 problems in \(bad.path); the proxy would not use this file.")
            }
        }
        let none = data.appendingPathComponent("none.yml").path
        XCTAssertThrowsError(try RulesCommand.Check.parse([none]).run()) { error in
            XCTAssertEqual("\(error)", "no file at \(none) to check.")
        }
        XCTAssertThrowsError(try RulesCommand.Check.parse(["--rules", none]).run()) { error in
            XCTAssertEqual("\(error)", "no rules file at \(none): `proxyapp run --rules \(none)` would refuse to start. "
                           + "Create it (README: Rules), or drop --rules.")
        }
    }

    /// `rules check` with no rules file in the data directory is no error (exit 0): the proxy
    /// runs without rules, and it says so.
    func testCheckWithoutTheDefaultFileIsNotAnError() throws {
        let data = try makeTemporaryDirectory().url
        XCTAssertNoThrow(try RulesCommand.Check.parse(["--data-dir", data.path]).run())
        let path = data.appendingPathComponent("rules.yml").path
        XCTAssertEqual(try RulesCommand.Check.noFile(at: path, named: nil),
                       "No rules file at \(path): the proxy runs without rules. Create it to add rules (README: Rules).")
    }

    /// `rules list` without a rules file says there are no rules and how to add some.
    func testListWithoutAFileIsNotAnError() throws {
        let data = try makeTemporaryDirectory().url
        XCTAssertNoThrow(try RulesCommand.List.parse(["--data-dir", data.path]).run())
        try Data("rules: [ { match: {}, block: {} } ]".utf8).write(to: data.appendingPathComponent("rules.yml"))
        XCTAssertThrowsError(try RulesCommand.List.parse(["--data-dir", data.path]).run()) { error in
            XCTAssertTrue("\(error)".contains("has errors; a running proxy keeps the rules it had"), "\(error)")
        }
    }

    /// What `run` starts with: no file at the default place is no rules (and says where to put
    /// them); a missing --rules file and a broken file are start-up errors naming the fix.
    func testRunStartsWithTheRulesFile() throws {
        let data = try makeTemporaryDirectory().url
        let dataOptions = try DataDirectoryOptions.parse(["--data-dir", data.path])
        let none = try RulesOptions.parse([]).loadForRun(data: dataOptions)
        XCTAssertEqual(none.rules.rules.count, 0)
        XCTAssertNil(none.text)
        XCTAssertEqual(none.banner, "Rules: none (create \(data.path)/rules.yml to add some; it is picked up while the proxy runs)\n")

        XCTAssertThrowsError(try RulesOptions.parse(["--rules", "/nonexistent/r.yml"]).loadForRun(data: dataOptions)) { error in
            XCTAssertEqual("\(error)", "no rules file at /nonexistent/r.yml. Create it (README: Rules), or drop --rules.")
        }

        let file = data.appendingPathComponent("rules.yml")
        try Data(sample.utf8).write(to: file)
        let loaded = try RulesOptions.parse([]).loadForRun(data: dataOptions)
        XCTAssertEqual(loaded.rules.enabledCount, 2)
        XCTAssertEqual(loaded.text, try Data(contentsOf: file))
        XCTAssertEqual(loaded.banner, "Rules: 2 active from \(file.path) (edits are reloaded while the proxy runs)\n")

        try Data("rules: 3\n".utf8).write(to: file)
        XCTAssertThrowsError(try RulesOptions.parse([]).loadForRun(data: dataOptions)) { error in
            XCTAssertEqual("\(error)", """
                the rules file cannot be used:
                \(file.path):1:8: 'rules' must be a list of rules (lines starting with '- '), not '3'
                Fix it (`proxyapp rules check` shows the problems), or move it away to start without rules.
                """)
        }
    }
}
