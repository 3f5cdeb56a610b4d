import ChildProcess
import Foundation
import PostgresTestSupport
import TestSupport
import XCTest

/// Two real `proxyapp run --store postgres://…` processes write into one PostgreSQL, `proxyapp
/// flows --store` lists both with their names, and a proxy whose database goes away keeps
/// proxying and stores what it kept once the database is back.
final class SharedCaptureEndToEndTests: XCTestCase {
    func testTwoProxiesShareOneCaptureAndSurviveAnOutage() async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                       "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it first")
        let cluster = try PostgresTestCluster.start()
        addTeardownBlock { cluster.stop() }
        let url = cluster.url(database: try cluster.createDatabase())
        let origin = try await TestOrigin.start()
        let lab1 = try await ProxyAppProcess.startHeadless(
            executable: executable, dataDirectory: try makeTemporaryDirectory("shared-1").url,
            arguments: ["--store", url, "--name", "lab-1"])
        addTeardownBlock { lab1.killHard() }
        // The second takes the store from the environment, as a lab's service file would.
        let lab2 = try await ProxyAppProcess.startHeadless(
            executable: executable, dataDirectory: try makeTemporaryDirectory("shared-2").url,
            arguments: ["--name", "lab-2"], environment: ["PROXYAPP_STORE": url])
        addTeardownBlock { lab2.killHard() }

        for (proxy, path) in [(lab1, "/echo?from=one"), (lab2, "/echo?from=two")] {
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)\(path)")
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
        }
        let listed = try await waitForFlows(2, executable, url)
        XCTAssertTrue(listed.contains { $0.hasPrefix("lab-1 ") && $0.contains("/echo?from=one") }, listed.joined(separator: "\n"))
        XCTAssertTrue(listed.contains { $0.hasPrefix("lab-2 ") && $0.contains("/echo?from=two") }, listed.joined(separator: "\n"))

        // The database goes away: the proxy still proxies, and keeps the flow for later.
        try cluster.stopServer()
        let during = try await Curl.fetch(viaProxy: lab1.port, "http://127.0.0.1:\(origin.port)/echo?during=outage")
        XCTAssertEqual(during.status, 200, during.result.summary)
        let refused = try await runProxyApp(executable, ["flows", "--store", url])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.output.contains("cannot reach the PostgreSQL store postgres://proxyapp@127.0.0.1:"),
                      refused.output)
        XCTAssertFalse(refused.output.contains("PSQLError"), refused.output)
        for _ in 0..<100 where !lab1.output.contains("capture store unreachable") {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertTrue(lab1.output.contains("capture store unreachable: keeping flows in memory"), lab1.output)
        try cluster.startServer()
        let after = try await waitForFlows(3, executable, url)
        XCTAssertTrue(after.contains { $0.hasPrefix("lab-1 ") && $0.contains("during=outage") }, after.joined(separator: "\n"))

        let filtered = try await runProxyApp(executable, ["flows", "--store", url, "--count", "--filter", "~u from="])
        XCTAssertEqual(filtered.output.trimmingCharacters(in: .whitespacesAndNewlines), "2", filtered.output)

        // The other reading commands on the same store: a HAR of one proxy's flows, a search.
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("shared-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: har) }
        let exported = try await runProxyApp(executable, ["export", "--store", url, "--har", har, "--filter", "~proxy 'lab-2$'"])
        XCTAssertEqual(exported.status, 0, exported.output)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        XCTAssertEqual(entries?.count, 1, exported.output)
        XCTAssertTrue(((entries?.first?["request"] as? [String: Any])?["url"] as? String)?.contains("from=two") == true)
        let found = try await runProxyApp(executable, ["search", "--store", url, "outage"])
        XCTAssertEqual(found.status, 0, found.output)
        XCTAssertTrue(found.output.contains("lab-1 ") && found.output.contains("during=outage"), found.output)
        XCTAssertEqual(found.output.split(separator: "\n").filter { $0.hasPrefix("lab-") }.count, 1, found.output)

        // Replay from the shared store on a machine running no proxy: the answer is captured there
        // under this machine's --name, linked to its original.
        let twoLine = try XCTUnwrap(after.first { $0.contains("from=two") })
        let twoID = try XCTUnwrap(twoLine.split(separator: " ", omittingEmptySubsequences: true).first { $0.hasPrefix("#") })
            .dropFirst()
        let replayed = try await runProxyApp(executable, [
            "replay", "--store", url, "--name", "replayer", "--data-dir", try makeTemporaryDirectory("replayer").url.path,
            String(twoID)])
        XCTAssertEqual(replayed.status, 0, replayed.output)
        let replays = try await runProxyApp(executable, ["flows", "--store", url, "--filter", "~replay & ~proxy replayer"])
        XCTAssertTrue(replays.output.contains("replayer") && replays.output.contains("/echo?from=two"), replays.output)
        await lab1.stop()
        await lab2.stop()
        await origin.shutdown()
        XCTAssertTrue(lab1.output.contains("capture store reachable again"), lab1.output)
    }

    /// `proxyapp flows --store URL` until it lists `count` flows (the writers commit within a
    /// tenth of a second, and retry an outage within seconds); its lines, header dropped.
    private func waitForFlows(_ count: Int, _ executable: String, _ url: String) async throws -> [String] {
        var lines: [String] = []
        for _ in 0..<100 {
            let listed = try await runProxyApp(executable, ["flows", "--store", url])
            lines = listed.output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("PROXY ") }
            if listed.status == 0 && lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(200))
        }
        XCTFail("the store never listed \(count) flows: \(lines)")
        return lines
    }
}
