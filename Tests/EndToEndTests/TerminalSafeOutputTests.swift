import CaptureStore
import ChildProcess
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// The real `proxyapp` on a real terminal (a pseudo-terminal from `script`, so stdout is a tty):
/// a HAR built to attack the terminal (OSC 52 clipboard writes, screen clears, title changes, C1
/// CSI, right-to-left overrides in URL, host, note, error, rule names, status text, headers and
/// bodies) is imported, then every command that prints captured or imported data runs, and no
/// raw ESC, BEL, C1 or bidi character may reach the terminal. Through a pipe, `export --raw`
/// still writes the bytes as they are.
final class TerminalSafeOutputTests: XCTestCase {
    private static let osc52 = #"\u001b]52;c;cHduZWQ=\u0007"#
    private static let clear = #"\u001b[2J\u001b]0;title\u0007\u009b2J\u202e\u2066"#
    /// What a URL may hold (C0 controls in one are refused at import): C1 and bidi characters.
    private static let inURL = #"\u009b2J\u202e\u2066"#

    private static let hostileHAR = #"""
    {"log": {"entries": [
      {"startedDateTime": "2026-11-22T10:00:00Z",
       "request": {"method": "POST", "url": "http://evil\#(inURL).test/p\#(inURL)gpj.exe",
                   "headers": [{"name": "X-Evil", "value": "\#(osc52)"}],
                   "postData": {"mimeType": "text/plain", "text": "body \#(osc52) \#(clear)"}},
       "response": {"status": 200, "statusText": "OK \#(clear)", "headers": [{"name": "X-Title", "value": "\#(clear)"}],
                    "content": {"mimeType": "text/plain", "text": "\#(osc52)"}},
       "_note": "note \#(osc52)", "_error": "error \#(clear)", "_rules": ["rule \#(osc52)"]},
      {"startedDateTime": "2026-11-22T10:00:01Z",
       "request": {"method": "GET", "url": "http://bin.test/"},
       "response": {"status": 200, "content": {"mimeType": "application/octet-stream", "text": "G1sySgcbXTUyO2M7/w==", "encoding": "base64"}}}
    ]}}
    """#

    private func executable() throws -> String {
        try XCTUnwrap(ProxyAppProcess.builtExecutable,
                      "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
    }

    /// Runs `proxyapp ARGS` with its stdout and stderr on a pseudo-terminal; returns what the
    /// terminal received.
    private func onTerminal(_ arguments: [String]) async throws -> (Data, Int32) {
        let command = ([try executable()] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
            .joined(separator: " ")
        let outcome = try await ChildProcess.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], timeout: 60)
        XCTAssertFalse(outcome.killed, "\(arguments) did not finish")
        return (outcome.stdout, outcome.exitCode)
    }

    private func assertTerminalSafe(_ output: Data, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let text = String(decoding: output, as: UTF8.self)
        XCTAssertFalse(output.contains(0x1B), "raw ESC from \(what):\n\(text.debugDescription)", file: file, line: line)
        XCTAssertFalse(output.contains(0x07), "raw BEL from \(what)", file: file, line: line)
        let bad = text.unicodeScalars.first { $0.value >= 0x80 && TerminalText.isUnsafe($0) }
        XCTAssertNil(bad, "raw U+\(String(bad?.value ?? 0, radix: 16)) from \(what)", file: file, line: line)
    }

    func testHostileImportNeverDrivesTheTerminal() async throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux script")
        let temporary = try TemporaryDirectory("proxyapp-tty")
        defer { temporary.remove() }
        let scratch = temporary.url
        let data = scratch.appendingPathComponent("data").path
        let har = scratch.appendingPathComponent("hostile.har")
        try Data(Self.hostileHAR.utf8).write(to: har)

        let (imported, status) = try await onTerminal(["import", "--data-dir", data, "--har", har.path])
        XCTAssertEqual(status, 0, String(decoding: imported, as: UTF8.self))
        let repository = TrafficRepository(database: try TrafficDatabase(path: data + "/traffic.sqlite"))
        let now = Date()
        try repository.savePins([PinnedDomain(host: "pin\u{1B}]0;x\u{7}.test\u{202E}", reason: "reason \u{1B}[2J\u{9B}",
                                              evidence: "", firstSeen: now, lastSeen: now, count: 1)])
        try Data("rules:\n  - name: \"rule \\u009B2J\\u202E\"\n    match: { host: a.test }\n    block: {}\n".utf8)
            .write(to: URL(fileURLWithPath: data + "/rules.yml"))
        let badHAR = scratch.appendingPathComponent("bad.har")
        try Data(#"{"log": {"entries": [{"startedDateTime": "2026-11-22T10:00:00Z", "request": {"method": "GET", "url": "/\u009b2J\u202e"}}]}}"#.utf8)
            .write(to: badHAR)

        let runs: [([String], Int32)] = [
            (["flows", "--data-dir", data], 0), (["pins", "list", "--data-dir", data], 0), (["rules", "list", "--data-dir", data], 0),
            (["export", "--data-dir", data, "--raw", "1"], 0), (["export", "--data-dir", data, "--raw", "2"], 1),
            (["export", "--data-dir", data, "--curl", "1"], 0), (["export", "--data-dir", data, "--har", "-"], 0),
            (["import", "--data-dir", data, "--har", badHAR.path], 1),
        ]
        for (arguments, expectedStatus) in runs {
            let (output, status) = try await onTerminal(arguments)
            XCTAssertEqual(status, expectedStatus, "\(arguments): \(String(decoding: output, as: UTF8.self))")
            assertTerminalSafe(output, arguments.joined(separator: " "))
        }
        let (flows, _) = try await onTerminal(["flows", "--data-dir", data])
        XCTAssertTrue(String(decoding: flows, as: UTF8.self).contains(#"[note \x1b]52;c;cHduZWQ=\x07]"#))
        let (binary, _) = try await onTerminal(["export", "--data-dir", data, "--raw", "2"])
        XCTAssertTrue(String(decoding: binary, as: UTF8.self).contains("holds binary bytes"))

        // Not a terminal: the exchange exactly as stored, control bytes and all.
        let piped = try await ChildProcess.run(try executable(), ["export", "--data-dir", data, "--raw", "1"], timeout: 30)
        XCTAssertEqual(piped.exitCode, 0)
        XCTAssertTrue(piped.stdout.contains(0x1B) && piped.stdout.contains(0x07), "a pipe gets the bytes as they are")
    }
}
