import ChildProcess
import Foundation
import ProxyModel
import TestSupport

/// Runs `/usr/bin/curl`, the real-world client of the end-to-end tests, with a clean
/// environment and a hard time limit.
///
/// The environment holds only `PATH` and a private `HOME`, and `-q` skips any `.curlrc`, so
/// neither the machine's proxy variables nor its CA-bundle variables reach curl: the proxy is
/// always named explicitly with `-x`. A run that outlives its limit is killed and reported as
/// `timedOut`.
enum Curl {
    struct Result: Sendable {
        var exitCode: Int32
        var stdout: Data
        var stderr: String
        var timedOut: Bool

        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

        /// One line for assertion messages.
        var summary: String {
            "curl exit \(exitCode)\(timedOut ? " (killed: timeout)" : ""); stderr: \(stderr.prefix(500))"
        }
    }

    static let executable = "/usr/bin/curl"

    /// One exchange as curl saw it: every status line and the final header block (from `-D`),
    /// and the body (from `-o`).
    struct Fetched: Sendable {
        var result: Result
        /// Status codes in the order received, informational ones (100) included.
        var statuses: [Int]
        /// Headers of the final response.
        var headers: [HeaderField]
        var body: Data

        var status: Int? { statuses.last }
        var bodyText: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? { headers.first(named: name) }
        func values(of name: String) -> [String] {
            headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        }
    }

    /// Fetches `url` through the proxy, keeping headers and body apart (curl decodes chunked
    /// bodies, so `-i` output could not be parsed by framing).
    static func fetch(viaProxy proxyPort: Int, _ url: String, _ arguments: [String] = [],
                      timeout: TimeInterval = 20) async throws -> Fetched {
        try await fetch(proxy: "http://127.0.0.1:\(proxyPort)", url, arguments, timeout: timeout)
    }

    /// `fetch` through the proxy `proxy` names (`socks5h://user:pass@127.0.0.1:PORT`…).
    static func fetch(proxy: String, _ url: String, _ arguments: [String] = [],
                      timeout: TimeInterval = 20) async throws -> Fetched {
        let scratch = try TemporaryDirectory("proxyapp-e2e-fetch")
        defer { scratch.remove() }
        let headersURL = scratch.url.appendingPathComponent("headers")
        let bodyURL = scratch.url.appendingPathComponent("body")
        let result = try await run(
            ["-x", proxy, "-D", headersURL.path, "-o", bodyURL.path] + arguments + [url], timeout: timeout)
        let headerText = (try? String(contentsOf: headersURL, encoding: .utf8)) ?? ""
        var statuses: [Int] = []
        var headers: [HeaderField] = []
        for line in headerText.components(separatedBy: "\r\n") where !line.isEmpty {
            if line.hasPrefix("HTTP/") {
                let parts = line.split(separator: " ")
                statuses.append(parts.count > 1 ? Int(parts[1]) ?? -1 : -1)
                headers = []
            } else if let colon = line.firstIndex(of: ":") {
                headers.append(HeaderField(name: String(line[..<colon]),
                                           value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        let body = (try? Data(contentsOf: bodyURL)) ?? Data()
        return Fetched(result: result, statuses: statuses, headers: headers, body: body)
    }

    /// Runs curl through the proxy on `proxyPort`: `-q -sS --max-time T -x http://127.0.0.1:PORT`
    /// followed by `arguments`.
    static func viaProxy(_ proxyPort: Int, _ arguments: [String], timeout: TimeInterval = 20) async throws -> Result {
        try await run(["-x", "http://127.0.0.1:\(proxyPort)"] + arguments, timeout: timeout)
    }

    /// Runs `curl -q -sS --max-time T` followed by `arguments`; the process is killed after
    /// `timeout` + 5 seconds if curl's own limit did not end it.
    static func run(_ arguments: [String], timeout: TimeInterval = 20) async throws -> Result {
        let outcome = try await ChildProcess.run(
            executable, ["-q", "-sS", "--max-time", String(Int(timeout.rounded(.up)))] + arguments, timeout: timeout + 5)
        return Result(exitCode: outcome.exitCode, stdout: outcome.stdout,
                      stderr: String(decoding: outcome.stderr, as: UTF8.self), timedOut: outcome.killed)
    }
}
