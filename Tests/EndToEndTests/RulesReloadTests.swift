import Foundation
import ProxyModel
import Rules
import RulesFile
import XCTest

/// Live reload through the real watcher: an edit takes effect for new requests while a long
/// download started under the old rules runs to its end untouched, and a broken edit keeps
/// the rules in force.
final class RulesReloadTests: XCTestCase {
    func testReloadWhileADownloadRuns() async throws {
        try await InterceptingFixture.run { fixture in
            let rulesFile = fixture.proxy.file("rules.yml")
            try Data("rules: []\n".utf8).write(to: rulesFile)
            let watcher = RulesFileWatcher(path: rulesFile.path, live: fixture.rules,
                                           initialText: try Data(contentsOf: rulesFile)) { _ in }
            let size = 16 << 20
            let output = fixture.proxy.file("download.bin")
            // Several seconds at 2 MiB/s: both reloads land in the middle of it.
            async let download = Curl.viaProxy(
                fixture.proxy.port, ["--limit-rate", "2M", "-o", output.path, fixture.origin.url("/bytes/\(size)")],
                timeout: 30)
            // The reloads must come after the download started: wait for its first bytes (the
            // bound is a safety net), not for a time after which it is assumed to run.
            let started = Date()
            func received() -> Int {
                (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
            }
            while received() == 0, Date().timeIntervalSince(started) < 60 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            guard received() > 0 else {
                _ = try? await download
                return XCTFail("the download sent no byte within 60 s: the reloads could not be tested under it")
            }
            try Data("""
                rules:
                  - name: cut off
                    match: { host: 127.0.0.1 }
                    block: {}
                """.utf8).write(to: rulesFile)
            watcher.checkNow()
            XCTAssertEqual(fixture.rules.current.enabledCount, 1)
            let blocked = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/status/200"))
            XCTAssertEqual(blocked.status, 403)

            // A broken edit keeps the block rule in force and says why.
            try Data("rules:\n  - match: { host: 127.0.0.1 }\n    blok: {}\n".utf8).write(to: rulesFile)
            watcher.checkNow()
            XCTAssertEqual(fixture.rules.status.summary, "1 active, reload failed (E: log)")
            XCTAssertEqual(fixture.rules.status.lastError,
                           "\(rulesFile.path):3:5: rule 1: unknown key 'blok' in a rule (did you mean 'block'?)")
            let stillBlocked = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/status/200"))
            XCTAssertEqual(stillBlocked.status, 403)

            let receivedAfterReloads = received()
            XCTAssertLessThan(receivedAfterReloads, size, "the download was still running across both reloads")
            let finished = try await download
            XCTAssertEqual(finished.exitCode, 0, finished.summary)
            XCTAssertNil(try PatternBytes.firstMismatch(inFile: output, expectedCount: size))
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            let downloadFlow = try XCTUnwrap(flows.first { $0.path.hasPrefix("/bytes/") })
            XCTAssertEqual(downloadFlow.responseBody.size, Int64(size))
            XCTAssertEqual(downloadFlow.appliedRules, [], "it started before the rule existed")
            XCTAssertEqual(flows.filter { $0.path == "/status/200" }.map(\.status), [403, 403])
        }
    }
}
