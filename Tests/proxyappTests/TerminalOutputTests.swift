import CaptureStore
import Foundation
import ProxyModel
import Rules
import RulesFile
import TestSupport
import XCTest

@testable import proxyapp

/// What the CLI prints from traffic, imports or rules files never hands a terminal a raw
/// control or bidi character: flow lines, pins, rules, error messages, `export --raw`.
final class TerminalOutputTests: XCTestCase {
    /// ESC ] 52 (clipboard write), ESC [ 2 J (clear), a title change, a C1 CSI, RLO.
    static let hostile = "x\u{1B}]52;c;cHduZWQ=\u{7}\u{1B}[2J\u{1B}]0;title\u{7}\u{9B}2J\u{202E}gpj.exe\u{2066}\r\n"

    static func assertSafe(_ text: String, keeping allowed: Set<Unicode.Scalar> = [],
                           file: StaticString = #filePath, line: UInt = #line) {
        for scalar in text.unicodeScalars where TerminalText.isUnsafe(scalar) && !allowed.contains(scalar) {
            XCTFail("raw U+\(String(scalar.value, radix: 16)) in \(text.debugDescription)", file: file, line: line)
            return
        }
    }

    func testFlowLineEscapesEveryTextField() {
        let flow = Flow(id: 1, method: "GET" + Self.hostile, scheme: "https", host: "h" + Self.hostile, port: 443,
                        path: "/p" + Self.hostile, error: "e" + Self.hostile, note: "n" + Self.hostile,
                        appliedRules: ["r" + Self.hostile])
        let line = FlowTable.line(for: flow)
        Self.assertSafe(line)
        XCTAssertTrue(line.contains(#"\x1b]52;c;cHduZWQ=\x07"#), line)
        XCTAssertTrue(line.contains(#"\u{202E}gpj.exe\u{2066}\x0d\x0a"#), line)
        var plain = Flow(id: 2, method: "GET", host: "a.test", port: 80, path: "/\u{1B}[31mred")
        plain.status = 200
        XCTAssertTrue(FlowTable.line(for: plain).hasSuffix(#" /\x1b[31mred"#), FlowTable.line(for: plain))
    }

    func testPinTableEscapesHostAndReason() {
        let now = Date()
        let pin = PinnedDomain(host: "a\u{1B}[2J.test", reason: "r\u{9B}\u{202E}", evidence: "", firstSeen: now, lastSeen: now, count: 1)
        let table = PinTable.render([pin], ttl: 60, now: now)
        Self.assertSafe(table, keeping: ["\n"])
        XCTAssertTrue(table.contains(#"a\x1b[2j.test"#), table)
    }

    /// Rule names may hold C1 and bidi characters (the loader refuses C0 ones, quoting them in its
    /// error, which reaches the terminal escaped too).
    func testRulesAreEscaped() throws {
        let yaml = "rules:\n  - name: \"evil\\u009B2J\\u202E\"\n    match: { host: a.test }\n    block: {}\n"
        let table = RuleTable.render(try RulesFile.parse(yaml, file: "rules.yml", baseDirectory: "/"))
        Self.assertSafe(table, keeping: ["\n"])
        XCTAssertTrue(table.contains(#"1. evil\u{9B}2J\u{202E}  [line 2]"#), table)

        let directory = try makeTemporaryDirectory().url
        try Data("rules:\n  - name: \"evil\\e]0;title\\a\"\n    match: { host: a.test }\n    block: {}\n".utf8)
            .write(to: directory.appendingPathComponent("rules.yml"))
        let data = try DataDirectoryOptions.parse(["--data-dir", directory.path])
        XCTAssertThrowsError(try RulesOptions.parse([]).loadForRun(data: data)) { error in
            Self.assertSafe("\(error)", keeping: ["\n"])
            XCTAssertTrue("\(error)".contains(#"rule 1 'evil\x1b]0;title\x07': name must be one line"#), "\(error)")
        }
    }

    /// Every CLI error message goes through `CLIError`: escaped, its line breaks kept.
    func testErrorMessagesAreEscaped() {
        let error = CLIError("no flow at \("h" + Self.hostile).\nnext line")
        Self.assertSafe(error.description, keeping: ["\n", "\r"])
        XCTAssertTrue(error.description.hasSuffix(#"\u{202E}gpj.exe\u{2066}"# + "\r\n.\nnext line"), error.description)
    }

    /// An import error quoting the file's strings shows them escaped, line breaks included (a
    /// newline inside a quoted URL must not start a line of its own).
    func testImportErrorsQuotingTheFileAreEscaped() throws {
        let directory = try makeTemporaryDirectory().url
        let har = directory.appendingPathComponent("evil.har")
        func refusal(method: String, url: String) throws -> String {
            try Data(#"{"log":{"entries":[{"startedDateTime":"2026-11-22T10:00:00Z","request":{"method":"\#(method)","url":"\#(url)"}}]}}"#.utf8)
                .write(to: har)
            do {
                try ImportCommand.parse(["--data-dir", directory.path, "--har", har.path]).run()
                return "imported"
            } catch {
                return "\(error)"
            }
        }
        let relative = try refusal(method: "GET", url: #"/a\u009b2J\u202e"#)
        Self.assertSafe(relative)
        XCTAssertTrue(relative.contains(#"not an absolute URL: '/a\u{9B}2J\u{202E}'"#), relative)
        let method = try refusal(method: #"GET\u001b]52;c;cHduZWQ=\u0007\n"#, url: "http://a.test/")
        Self.assertSafe(method)
        XCTAssertTrue(method.contains(#"request.method: 'GET\x1b]52;c;cHduZWQ=\x07\x0a' is not an HTTP method"#), method)
        let nul = try refusal(method: "GET", url: #"http://a.test/a\u0000b"#)
        Self.assertSafe(nul)
        XCTAssertTrue(nul.contains(#"log.entries[0].request.url: a control character (\x00) in the URL"#), nul)
    }

    /// `export --raw` writes the bytes as they are to a pipe or file; to a terminal, text is
    /// escaped (its CRLF line breaks kept) and binary is refused with the fix.
    func testRawOutputToATerminal() throws {
        let text = Array("GET /\u{1B}[2J HTTP/1.1\r\nX: \u{9B}\u{202E}\r\n\r\n".utf8)
        XCTAssertEqual(try ExportCommand.rawOutput(text, id: 3, stdoutIsTerminal: false), text)
        let shown = String(decoding: try ExportCommand.rawOutput(text, id: 3, stdoutIsTerminal: true), as: UTF8.self)
        XCTAssertEqual(shown, "GET /\\x1b[2J HTTP/1.1\r\nX: \\u{9B}\\u{202E}\r\n\r\n")

        let binary: [UInt8] = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".utf8) + [0x1F, 0x8B, 0x08, 0xFF, 0x1B]
        XCTAssertEqual(try ExportCommand.rawOutput(binary, id: 4, stdoutIsTerminal: false), binary)
        XCTAssertThrowsError(try ExportCommand.rawOutput(binary, id: 4, stdoutIsTerminal: true)) { error in
            XCTAssertEqual("\(error)", "flow #4 holds binary bytes (a compressed or binary body) and stdout is a terminal: "
                + "redirect stdout (--raw 4 > flow-4.http) or pipe it (--raw 4 | less).")
        }
    }
}
