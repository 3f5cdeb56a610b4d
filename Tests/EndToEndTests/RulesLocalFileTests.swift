import Foundation
import ProxyModel
import Rules
import RulesFile
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Map-local files against clients and files that misbehave: a client that stops reading a big
/// file is cut off after the idle timeout (its connection and file released), and a FIFO in a
/// mapped directory is refused at once instead of holding a thread.
final class RulesLocalFileTests: XCTestCase {
    private func withProxy(idleTimeout: Int64, _ body: (ProxyHarness, LiveRules) async throws -> Void) async throws {
        let rules = LiveRules()
        let proxy = try await ProxyHarness.start(rules: rules) { $0.clientIdleTimeout = .seconds(idleTimeout) }
        do {
            try await body(proxy, rules)
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    private func use(_ yaml: String, in proxy: ProxyHarness, _ rules: LiveRules) throws {
        rules.replace(with: try RulesFile.parse(yaml, file: "rules.yml", baseDirectory: proxy.directory.path), source: nil)
    }

    func testClientThatStopsReadingIsCutOff() async throws {
        try await withProxy(idleTimeout: 1) { proxy, rules in
            // 256 MiB of zeros without writing them: far more than socket buffers hold.
            let big = proxy.file("big.bin")
            XCTAssertTrue(FileManager.default.createFile(atPath: big.path, contents: nil))
            XCTAssertEqual(truncate(big.path, 256 << 20), 0)
            try use("rules: [ { name: big, match: { host: big.test }, map_local: { file: big.bin } } ]", in: proxy, rules)

            let client = try RawClient(port: proxy.port)
            defer { client.close() }
            try client.send("GET http://big.test/ HTTP/1.1\r\nHost: big.test\r\n\r\n")
            // Read nothing for a while: the proxy fills the socket, then waits for the client.
            try await Task.sleep(nanoseconds: 2_500_000_000)
            let received = try client.drain(count: 256 << 20, timeout: 10)
            XCTAssertLessThan(received, 256 << 20, "the response was cut off")
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.error,
                           "the client stopped reading the map_local file for 1s (response incomplete)")

            // The proxy carries on (.invalid is answered without a DNS query).
            let next = try await Curl.fetch(viaProxy: proxy.port, "http://next.invalid/", timeout: 10)
            XCTAssertEqual(next.status, 502)
        }
    }

    func testFIFOInAMappedDirectoryIsRefused() async throws {
        try await withProxy(idleTimeout: 10) { proxy, rules in
            let folder = proxy.file("site")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            XCTAssertEqual(mkfifo(folder.appendingPathComponent("pipe").path, 0o600), 0)
            try use("rules: [ { name: site, match: { host: site.test }, map_local: { dir: site } } ]", in: proxy, rules)
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://site.test/pipe", timeout: 10)
            XCTAssertEqual(fetched.status, 404, fetched.result.summary)
            XCTAssertEqual(fetched.bodyText, "map_local rule 'site': \(folder.path)/pipe is not a regular file\n")
        }
    }
}
