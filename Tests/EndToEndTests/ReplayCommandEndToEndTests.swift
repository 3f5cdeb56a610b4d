import ChildProcess
import Foundation
import TestSupport
import XCTest

/// `proxyapp replay`, `send` and `import --curl` as a user runs them: against a running
/// `proxyapp run` (through its control channel) and with no proxy running (an engine of their
/// own), each exchange captured in the data directory and refusals said in words.
final class ReplayCommandEndToEndTests: XCTestCase {
    private func proxyapp(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let outcome = try await ChildProcess.run(executable, arguments, timeout: 60)
        return (outcome.exitCode, String(decoding: outcome.stdout, as: UTF8.self), String(decoding: outcome.stderr, as: UTF8.self))
    }

    /// `proxyapp flows` lines (ids first) once `count` flows are stored.
    private func flowLines(_ executable: String, data: URL, count: Int, filter: String? = nil) async throws -> [String] {
        let deadline = Date().addingTimeInterval(30)
        var lines: [String] = []
        repeat {
            let listed = try await proxyapp(executable, ["flows", "--data-dir", data.path] + (filter.map { ["--filter", $0] } ?? []))
            lines = listed.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("#") }
            if lines.count >= count { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        return lines
    }

    func testReplayThroughARunningProxyAndWithNoneRunning() async throws {
        let executable = try proxyAppExecutable()
        let scratch = try makeTemporaryDirectory("replay-cli").url
        let tls = try TLSFixtures(directory: scratch)
        let tlsOrigin = try await TestOrigin.start(tls: try tls.originContext(for: "localhost"))
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown(); await tlsOrigin.shutdown() } }
        let data = scratch.appendingPathComponent("data")
        let proxy = try await ProxyAppProcess.startHeadless(
            executable: executable, dataDirectory: data, arguments: ["--upstream-ca", tls.originCAFile.path])
        addTeardownBlock { proxy.killHard() }
        let proxyCA = data.appendingPathComponent("ca/ProxyCA.pem").path

        let plain = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "first body"])
        XCTAssertEqual(plain.status, 200, plain.result.summary)
        let secure = try await Curl.fetch(viaProxy: proxy.port, "https://localhost:\(tlsOrigin.port)/echo?s=1",
                                          ["--cacert", proxyCA, "-H", "X-Over: tls"])
        XCTAssertEqual(secure.status, 200, secure.result.summary)
        let stored = try await flowLines(executable, data: data, count: 2)
        XCTAssertEqual(stored.count, 2, stored.joined(separator: "\n"))
        let plainID = try XCTUnwrap(stored.first { $0.contains("POST") }.flatMap(Self.id))
        let secureID = try XCTUnwrap(stored.first { $0.contains("GET") && $0.contains("localhost") }.flatMap(Self.id))

        let replayed = try await proxyapp(executable, ["replay", String(plainID), String(secureID), "--count", "2",
                                                       "--concurrency", "2", "--data-dir", data.path])
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
        let lines = replayed.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5, replayed.stdout)
        XCTAssertTrue(lines[0].hasPrefix("#\(plainID) ↻ POST \(origin.url("/echo")) → 200 OK"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("#\(secureID) ↻ GET https://localhost:\(tlsOrigin.port)/echo?s=1 → 200 OK"), lines[1])
        XCTAssertEqual(lines.last, "replayed 4 requests: 4 answered")
        let replays = try await flowLines(executable, data: data, count: 4, filter: "~replay")
        XCTAssertEqual(replays.count, 4, replays.joined(separator: "\n"))
        XCTAssertEqual(origin.log.requests.suffix(2).map(\.bodyPrefix), [Data("first body".utf8), Data("first body".utf8)])
        XCTAssertEqual(tlsOrigin.log.requests.last?.headers.first(named: "x-over"), "tls")

        // Stopped: the command starts an engine of its own, with the flags `run` took.
        let stopped = await proxy.stop()
        XCTAssertTrue(stopped)
        let alone = try await proxyapp(executable, ["replay", String(secureID), "--upstream-ca", tls.originCAFile.path,
                                                    "--data-dir", data.path])
        XCTAssertEqual(alone.status, 0, alone.stderr)
        XCTAssertTrue(alone.stdout.contains("→ 200 OK"), alone.stdout)
        let untrusted = try await proxyapp(executable, ["replay", String(secureID), "--data-dir", data.path])
        XCTAssertEqual(untrusted.status, 0, untrusted.stderr)
        XCTAssertTrue(untrusted.stdout.contains("→ 502"), "without --upstream-ca the origin is not trusted:\n\(untrusted.stdout)")
        let all = try await flowLines(executable, data: data, count: 6, filter: "~replay")
        XCTAssertEqual(all.count, 6)
    }

    func testSendAndCurlImportPrintTheResponseAndCaptureIt() async throws {
        let executable = try proxyAppExecutable()
        let scratch = try makeTemporaryDirectory("send-cli")
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown() } }
        let data = scratch.url.appendingPathComponent("data").path
        let request = try scratch.write("request.http", """
            # sent by hand
            POST /echo?from=send HTTP/1.1
            Content-Type: text/plain
            X-Hand: written

            hello from a file

            """)
        let sent = try await proxyapp(executable, ["send", request, "--to", "http://\(origin.authority)", "--data-dir", data])
        XCTAssertEqual(sent.status, 0, sent.stderr)
        XCTAssertTrue(sent.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"), sent.stdout)
        XCTAssertTrue(sent.stdout.hasSuffix("\r\n\r\nhello from a file"), sent.stdout)
        XCTAssertEqual(origin.log.requests.last?.uri, "/echo?from=send")
        XCTAssertEqual(origin.log.requests.last?.headers.first(named: "x-hand"), "written")
        XCTAssertEqual(origin.log.requests.last?.headers.first(named: "content-length"), "17")

        let curl = "curl 'http://\(origin.authority)/echo?from=curl' -H 'accept: application/json' "
            + "-H 'content-type: application/json' --data-raw $'{\"a\":\"it\\'s\"}' --compressed"
        let imported = try await proxyapp(executable, ["import", "--curl", curl, "--data-dir", data])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.stdout.hasSuffix(#"{"a":"it's"}"#), imported.stdout)
        XCTAssertEqual(origin.log.requests.last?.method, "POST")
        XCTAssertNotNil(origin.log.requests.last?.headers.first(named: "accept-encoding"))

        let unknown = try await proxyapp(executable, ["import", "--curl", "curl -Z http://\(origin.authority)/", "--data-dir", data])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("-Z"), unknown.stderr)
        let noHost = try scratch.write("nohost.http", "GET /x HTTP/1.1\n\n")
        let refused = try await proxyapp(executable, ["send", noHost, "--data-dir", data])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("--to URL"), refused.stderr)
        XCTAssertEqual(origin.log.requests.count, 2, "refused requests reach no origin")
        let flows = try await flowLines(executable, data: scratch.url.appendingPathComponent("data"), count: 2)
        XCTAssertEqual(flows.count, 2)
    }

    func testReplayRefusesWhatItCannotSendFaithfully() async throws {
        let executable = try proxyAppExecutable()
        let scratch = try makeTemporaryDirectory("replay-refusals").url
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown() } }
        let data = scratch.appendingPathComponent("data")
        let proxy = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: data,
                                                           arguments: ["--max-body-size", "8"])
        addTeardownBlock { proxy.killHard() }
        let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "a body longer than eight bytes"])
        XCTAssertEqual(fetched.status, 200)
        let first = try await flowLines(executable, data: data, count: 1)
        let id = try XCTUnwrap(first.first.flatMap(Self.id))

        let missing = try await proxyapp(executable, ["replay", "999", "--data-dir", data.path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no flow #999 in the capture"), missing.stderr)
        let cut = try await proxyapp(executable, ["replay", String(id), "--data-dir", data.path])
        XCTAssertEqual(cut.status, 1)
        XCTAssertTrue(cut.stderr.contains("request body was cut at capture (8 of 30 bytes kept)"), cut.stderr)
        XCTAssertTrue(cut.stderr.contains("--allow-truncated"), cut.stderr)
        XCTAssertEqual(origin.log.requests.count, 1, "nothing was sent")
        let anyway = try await proxyapp(executable, ["replay", String(id), "--allow-truncated", "--data-dir", data.path])
        XCTAssertEqual(anyway.status, 0, anyway.stderr)
        XCTAssertEqual(origin.log.requests.last?.bodyPrefix, Data("a body l".utf8))
        let usage = try await proxyapp(executable, ["replay", "--data-dir", data.path])
        XCTAssertEqual(usage.status, 64)
        XCTAssertTrue(usage.stderr.contains("name at least one flow id"), usage.stderr)
    }

    /// `#12     09:06:25.682 GET …` → 12.
    private static func id(_ line: String) -> Int64? {
        Int64(line.dropFirst().prefix { $0.isNumber })
    }
}
