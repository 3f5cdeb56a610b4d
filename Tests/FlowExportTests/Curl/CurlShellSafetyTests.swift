@testable import FlowExport
import Foundation
import ProxyModel
import XCTest

/// A curl command is pasted into an interactive shell: no control byte may reach the terminal,
/// and the shell must hand curl exactly the captured bytes.
final class CurlShellSafetyTests: XCTestCase {
    private static let hostile = [
        "abc\u{1B}def", "innocent\u{3}\necho PWNED", "trailing\n\n", "\n", "it's\t\r\u{7F}\u{9B}x", "",
        "\u{1B}]0;title\u{7}", "ünï \u{4}\u{1A}", "$(id) `id` \\ ! %s %b \\012",
        "rm -rf /tmp/x \u{202E}gpj.exe\u{202C} \u{2066}isolated\u{2069}",
    ]

    private func hostileFlow(body: [UInt8] = Array("innocent\u{3}\necho PWNED".utf8)) -> Flow {
        Flow(method: "POST", scheme: "https", host: "api.test", port: 443, path: "/a\u{1B}[2J?x=\u{3}\n",
             requestHeaders: [HeaderField(name: "X-Evil", value: "a\u{1B}[2Jb\u{3}c\nd\re\tf\u{7F}"),
                              HeaderField(name: "Content-Type", value: "text/plain")],
             requestBody: CapturedBody(bytes: Data(body), size: Int64(body.count)))
    }

    /// Every byte below 0x20 is the LF ending a comment or a ` \` continuation (or the last
    /// line); no DEL, no C1 control.
    private func assertNoRawControls(_ command: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(command.utf8)
        for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x7F {
            XCTAssertEqual(byte, 0x0A, "raw control byte \(byte) at \(index) in \(command.debugDescription)", file: file, line: line)
        }
        XCTAssertFalse(command.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, file: file, line: line)
        XCTAssertFalse(command.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) },
                       "a raw bidi override", file: file, line: line)
        let lines = command.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.last, "", "ends in a newline", file: file, line: line)
        for text in lines.dropLast(2) where !text.hasPrefix("#") {
            XCTAssertTrue(text.hasSuffix(" \\"), "a LF that is not a continuation: \(text.debugDescription)", file: file, line: line)
        }
    }

    func testQuotedTextHasNoControlBytesAndTheShellRestoresThem() throws {
        for text in Self.hostile {
            let quoted = ShellQuoting.quote(text)
            XCTAssertFalse(quoted.unicodeScalars.contains(where: ShellQuoting.isControl), quoted.debugDescription)
            let output = try ShellRun.output(ShellQuoting.newlineDefinition + "; printf '%s' " + quoted)
            XCTAssertEqual(output, Data(text.utf8), "\(text.debugDescription) quoted as \(quoted)")
        }
        XCTAssertEqual(ShellQuoting.quote("abc\u{1B}def"), #"'abc'"$(printf '\033')"'def'"#)
    }

    func testHostileRequestRendersWithoutControlBytes() {
        let command = CurlCommand.render(hostileFlow())
        assertNoRawControls(command)
        XCTAssertTrue(command.contains(" | base64 -d | curl "), "a body with 0x03 goes through base64:\n\(command)")
        XCTAssertFalse(command.contains("PWNED"))
        let tunnel = Flow(kind: .tunnel, method: "CONNECT", host: "a\nrm -rf ~\u{1B}", port: 443, path: "")
        let comment = CurlCommand.render(tunnel)
        assertNoRawControls(comment)
        XCTAssertTrue(comment.hasPrefix(#"# CONNECT a\012rm -rf ~\033:443 is a tunnel"#), comment)
    }

    /// A right-to-left override in a URL or header would make the pasted command read otherwise
    /// than it runs: it is written as a printf escape, outside the quotes.
    func testBidiOverridesAreEscaped() {
        let flow = Flow(method: "GET", scheme: "https", host: "api.test", port: 443, path: "/\u{202E}fdp.exe",
                        requestHeaders: [HeaderField(name: "X-Name", value: "\u{2067}abc\u{2069}")])
        let command = CurlCommand.render(flow)
        assertNoRawControls(command)
        XCTAssertTrue(command.contains(#"'https://api.test/'"$(printf '\342\200\256')"'fdp.exe'"#), command)
    }

    /// The whole command, run by `/bin/sh` with a `curl` function that prints its arguments and
    /// stdin: curl would get the captured method, URL, headers and body byte for byte.
    func testShellPassesCurlTheCapturedBytes() throws {
        let flow = hostileFlow()
        let arguments = try ShellRun.curlArguments(CurlCommand.render(flow))
        XCTAssertEqual(arguments.first, flow.url, "POST with a body needs no -X")
        XCTAssertTrue(arguments.contains("X-Evil: a\u{1B}[2Jb\u{3}c\nd\re\tf\u{7F}"), "\(arguments)")
        XCTAssertEqual(arguments.last, "stdin:innocent\u{3}\necho PWNED")

        let text = hostileFlow(body: Array("line 1\r\n\tline 2\n".utf8))
        let textArguments = try ShellRun.curlArguments(CurlCommand.render(text))
        XCTAssertEqual(textArguments.suffix(3), ["--data-binary", "line 1\r\n\tline 2\n", "stdin:"])
    }

    func testGloboffAndVersionOptions() {
        func flow(_ scheme: String, _ version: String) -> Flow {
            Flow(scheme: scheme, host: "api.test", port: scheme == "https" ? 443 : 80, path: "/q?filter[name]={x}",
                 httpVersion: version, requestHeaders: [HeaderField(name: "User-Agent", value: "u"), HeaderField(name: "Accept", value: "a")])
        }
        XCTAssertTrue(CurlCommand.render(flow("https", "HTTP/2.0")).hasPrefix(
            "curl 'https://api.test/q?filter[name]={x}' --http2 --path-as-is --globoff \\\n"))
        XCTAssertTrue(CurlCommand.render(flow("http", "HTTP/2.0")).hasPrefix(
            "curl 'http://api.test/q?filter[name]={x}' --path-as-is --globoff \\\n"), "no h2c upgrade for http://")
        XCTAssertTrue(CurlCommand.render(flow("https", "HTTP/3.0")).hasPrefix(
            "curl 'https://api.test/q?filter[name]={x}' --path-as-is --globoff \\\n"), "no --http3")
    }

    func testHeaderNamesThatAreNotTokensAreLeftOut() {
        let flow = Flow(host: "api.test", port: 80, requestHeaders: [
            HeaderField(name: "@/etc/passwd", value: "x"), HeaderField(name: "X Space", value: "y"),
            HeaderField(name: "Bad\u{1B}[31m", value: "z"), HeaderField(name: "X-Fine!#$%&'*+-.^_`|~", value: "ok"),
            HeaderField(name: "User-Agent", value: "u"), HeaderField(name: "Accept", value: "a"),
        ])
        let command = CurlCommand.render(flow)
        assertNoRawControls(command)
        XCTAssertEqual(command, """
            # left out headers whose names are not HTTP tokens (curl cannot send them): @/etc/passwd, X Space, Bad\\033[31m
            curl 'http://api.test/' --http1.1 --path-as-is --globoff \\
              -H 'X-Fine!#$%&'\\''*+-.^_`|~: ok' \\
              -H 'User-Agent: u' \\
              -H 'Accept: a'

            """)
    }
}

/// Runs shell text with `/bin/sh -c` and returns its standard output.
enum ShellRun {
    static func output(_ script: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    /// The arguments a rendered command gives `curl` (a shell function here), then `stdin:` and
    /// what it reads from standard input when the body comes through the pipe.
    static func curlArguments(_ command: String) throws -> [String] {
        let fake = #"curl() { for a in "$@"; do printf '%s\000' "$a"; done; printf 'stdin:'; case "$*" in *@-*) cat;; esac; }"#
        let data = try output(fake + "\n" + command)
        return data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }
}
