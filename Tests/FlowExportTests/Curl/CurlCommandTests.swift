import FlowExport
import Foundation
import ProxyModel
import XCTest

/// curl commands: exact text for the common shapes, shell-safe quoting, and a `sh -n` syntax
/// check of every rendered command.
final class CurlCommandTests: XCTestCase {
    private func request(_ method: String, _ path: String = "/", version: String = "HTTP/1.1",
                         headers: [(String, String)], body: [UInt8] = []) -> Flow {
        Flow(method: method, scheme: "http", host: "api.test", port: 8080, path: path, httpVersion: version,
             requestHeaders: headers.map { HeaderField(name: $0.0, value: $0.1) },
             requestBody: CapturedBody(bytes: Data(body), size: Int64(body.count)))
    }

    func testGet() {
        let flow = request("GET", "/items?page=2&sort=name", headers: [
            ("Host", "api.test:8080"), ("User-Agent", "curl/8.5.0"), ("Accept", "*/*"),
            ("Accept-Encoding", "gzip, br"), ("Connection", "keep-alive"), ("Proxy-Connection", "keep-alive"),
        ])
        XCTAssertEqual(CurlCommand.render(flow), """
            curl 'http://api.test:8080/items?page=2&sort=name' --http1.1 --path-as-is --globoff \\
              -H 'User-Agent: curl/8.5.0' \\
              -H 'Accept: */*' \\
              -H 'Accept-Encoding: gzip, br' \\
              --compressed

            """)
    }

    func testPostText() {
        let flow = request("POST", "/items", headers: [
            ("Host", "api.test:8080"), ("Content-Type", "application/json"), ("Content-Length", "24"),
        ], body: Array(#"{"name":"pen","n":"$1"}"#.utf8) + [0x0A])
        XCTAssertEqual(CurlCommand.render(flow), """
            proxyapp_nl="$(printf '\\012.')"; proxyapp_nl="${proxyapp_nl%.}"; curl 'http://api.test:8080/items' --http1.1 --path-as-is --globoff \\
              -H 'Content-Type: application/json' \\
              -H 'User-Agent:' \\
              -H 'Accept:' \\
              --data-binary '{"name":"pen","n":"$1"}'"$proxyapp_nl"

            """)
    }

    func testPostBinaryGoesThroughBase64AndStdin() {
        let flow = request("PUT", "/blob", headers: [("Host", "other.test"), ("Content-Type", "application/octet-stream")],
                           body: [0x00, 0xFF, 0x10, 0x27])
        XCTAssertEqual(CurlCommand.render(flow), """
            printf '%s' 'AP8QJw==' | base64 -d | curl -X PUT 'http://api.test:8080/blob' --http1.1 --path-as-is --globoff \\
              -H 'Host: other.test' \\
              -H 'Content-Type: application/octet-stream' \\
              -H 'User-Agent:' \\
              -H 'Accept:' \\
              --data-binary @-

            """)
        // Valid UTF-8 that starts with `@` would name a file for --data-binary: it goes through stdin too.
        let at = request("POST", headers: [("Content-Type", "text/plain")], body: Array("@/etc/passwd".utf8))
        XCTAssertTrue(CurlCommand.render(at).hasPrefix("printf '%s' 'QC9ldGMvcGFzc3dk' | base64 -d | curl 'http://"))
    }

    func testSingleQuotesInsideValues() {
        let flow = request("GET", "/it's", headers: [
            ("User-Agent", "O'Brien's agent"), ("Accept", "*/*"), ("X-Empty", ""), ("X-Shell", "$(rm -rf ~) `id` \\ !"),
        ])
        XCTAssertEqual(CurlCommand.render(flow), """
            curl 'http://api.test:8080/it'\\''s' --http1.1 --path-as-is --globoff \\
              -H 'User-Agent: O'\\''Brien'\\''s agent' \\
              -H 'Accept: */*' \\
              -H 'X-Empty;' \\
              -H 'X-Shell: $(rm -rf ~) `id` \\ !'

            """)
    }

    func testHTTP10AndHead() {
        let old = request("GET", version: "HTTP/1.0", headers: [("User-Agent", "old"), ("Accept", "*/*")])
        XCTAssertEqual(CurlCommand.render(old), """
            curl 'http://api.test:8080/' --http1.0 --path-as-is --globoff \\
              -H 'User-Agent: old' \\
              -H 'Accept: */*'

            """)
        let head = request("HEAD", headers: [("User-Agent", "x"), ("Accept", "*/*")])
        XCTAssertTrue(CurlCommand.render(head).hasPrefix("curl --head 'http://api.test:8080/' --http1.1 --path-as-is --globoff \\\n"))
    }

    func testMethodOnlyWhenNotImplied() {
        let headers = [("User-Agent", "x"), ("Accept", "*/*"), ("Content-Type", "text/plain")]
        XCTAssertTrue(CurlCommand.render(request("POST", headers: headers)).hasPrefix("curl -X POST 'http"), "POST without body")
        XCTAssertTrue(CurlCommand.render(request("GET", headers: headers, body: [0x61])).hasPrefix("curl -X GET 'http"),
                      "GET with body")
        XCTAssertTrue(CurlCommand.render(request("DELETE", headers: headers)).hasPrefix("curl -X DELETE 'http"))
    }

    func testHTTP2RequestDropsPseudoHeaders() {
        var flow = request("GET", version: "HTTP/2.0", headers: [
            (":authority", "api.test:8080"), (":method", "GET"), (":path", "/"), (":scheme", "http"),
            ("user-agent", "Chrome"), ("accept", "*/*"), ("te", "trailers"),
        ])
        flow.scheme = "https"
        flow.port = 443
        XCTAssertEqual(CurlCommand.render(flow), """
            curl 'https://api.test/' --http2 --path-as-is --globoff \\
              -H 'user-agent: Chrome' \\
              -H 'accept: */*'

            """)
    }

    func testTunnelsAreNotReproducible() {
        let tunnel = Flow(kind: .tunnel, method: "CONNECT", scheme: "https", host: "pinned.test", port: 443, path: "")
        XCTAssertFalse(CurlCommand.isReproducible(tunnel))
        XCTAssertTrue(CurlCommand.isReproducible(request("GET", headers: [])))
        XCTAssertEqual(CurlCommand.render(tunnel),
                       "# CONNECT pinned.test:443 is a tunnel of opaque bytes: there is no HTTP request to reproduce\n")
    }

    func testTruncatedBodySaysSoInAComment() {
        var flow = request("POST", headers: [("Content-Type", "text/plain")], body: Array("abc".utf8))
        flow.requestBody.size = 10
        flow.requestBody.truncated = true
        XCTAssertTrue(CurlCommand.render(flow).hasPrefix(
            "# the request body was truncated when captured: only 3 of 10 bytes are sent\ncurl 'http"))
    }

    /// Every rendered command is valid POSIX shell: `sh -n` parses it without running it.
    func testRenderedCommandsAreValidShell() throws {
        let flows = [
            request("GET", "/it's", headers: [("X-Quote", "'\"'"), ("X-Newline", "a\nb"), ("X-Dollar", "$HOME")]),
            request("POST", headers: [("Content-Type", "text/plain")], body: Array("it's\n'quoted'\n\\n".utf8)),
            request("PUT", headers: [], body: [0, 1, 2, 0xFF]),
            Flow(kind: .tunnel, method: "CONNECT", host: "a.test", port: 443, path: ""),
        ]
        for flow in flows {
            let command = CurlCommand.render(flow)
            let (status, errors) = try ShellSyntaxCheck.run(command)
            XCTAssertEqual(status, 0, "sh -n refused:\n\(command)\n\(errors)")
        }
        let (status, _) = try ShellSyntaxCheck.run("curl 'unterminated")
        XCTAssertNotEqual(status, 0, "the check itself must catch a syntax error")
    }
}

/// Runs `/bin/sh -n` on a script (parse only, nothing executed).
enum ShellSyntaxCheck {
    static func run(_ script: String) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-n"]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, message)
    }
}
