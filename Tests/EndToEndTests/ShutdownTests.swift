import CaptureStore
import FakeDNS
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// `proxyapp run` stops on SIGTERM whatever is running — a download the client is not reading,
/// a DNS lookup that never returns — after storing the flows it had, with the write-ahead log
/// folded into the capture file; a second signal during the shutdown ends it at once.
///
/// The stuck lookup is real: the proxy asks (`--dns-server`) a `FakeDNSServer` that never
/// answers, with a 60 s `--dns-timeout`. Waits for the exit are bounded (a hang fails by the
/// bound); nothing asserts on timing.
final class ShutdownTests: XCTestCase {
    /// A proxy whose DNS server never answers (see the type's comment), with an origin; `body`
    /// gets the three and the data directory.
    private func withStuckDNSProxy(_ body: (ProxyAppProcess, TestOrigin, FakeDNSServer, URL) async throws -> Void)
        async throws {
        let data = try makeTemporaryDirectory("shutdown").url
        let dns = try await FakeDNSServer.start { _ in .silence }
        let origin = try await TestOrigin.start()
        do {
            let proxy = try await ProxyAppProcess.startHeadless(
                executable: try proxyAppExecutable(), dataDirectory: data,
                arguments: ["--dns-timeout", "60", "--dns-server", dns.argument])
            do {
                try await body(proxy, origin, dns, data)
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        } catch {
            await origin.shutdown()
            await dns.shutdown()
            throw error
        }
        await origin.shutdown()
        await dns.shutdown()
    }

    /// Starts a download the client does not read (the proxy holds it by back-pressure) and a
    /// request whose DNS lookup never returns; returns both clients.
    private func startDownloadAndStuckLookup(proxy: ProxyAppProcess, origin: TestOrigin, dns: FakeDNSServer) async throws
        -> (download: RawClient, lookup: RawClient) {
        let download = try RawClient(port: proxy.port)
        try download.send("GET \(origin.url("/bytes/\(4 << 30)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
        let started = try download.read(timeout: 10) { $0.count >= 64 << 10 }
        XCTAssertTrue(started, "the download is under way")
        let lookup = try RawClient(port: proxy.port)
        try lookup.send("GET http://stuckname/ HTTP/1.1\r\nHost: stuckname\r\n\r\n")
        let asked = await dns.waitUntilQueried(["stuckname"])
        XCTAssertTrue(asked, "the stuck lookup is in flight")
        // Another exchange through the proxy while the lookup hangs.
        let after = try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/204"), timeout: 10)
        XCTAssertEqual(after.status, 204)
        return (download, lookup)
    }

    /// The flows stored in `data`'s capture file alone (without its `-wal`), by path.
    private func flowsInTheMainFile(of data: URL) throws -> [Flow] {
        let copy = try makeTemporaryDirectory("shutdown").url.appendingPathComponent("copy.sqlite")
        try FileManager.default.copyItem(at: data.appendingPathComponent("traffic.sqlite"), to: copy)
        let repository = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: copy.path))
        return try repository.latestFlows(limit: 1000)
    }

    func testSIGTERMStopsMidDownloadAndMidLookupAndKeepsTheFlows() async throws {
        try await withStuckDNSProxy { proxy, origin, dns, data in
            for index in 0..<3 {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/\(1000 + index)"), timeout: 10)
                XCTAssertEqual(fetched.status, 200)
            }
            let (download, lookup) = try await startDownloadAndStuckLookup(proxy: proxy, origin: origin, dns: dns)
            defer {
                download.close()
                lookup.close()
            }

            proxy.send(SIGTERM)
            let status = await proxy.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, "exited cleanly on SIGTERM (nil: it hung and was killed)\n\(proxy.output)")
            XCTAssertTrue(proxy.output.contains("Stored "), proxy.output)
            XCTAssertFalse(proxy.output.contains("Cannot schedule tasks"), proxy.output)

            // The lookup's client was answered, not left hanging.
            XCTAssertTrue(try lookup.read(timeout: 5) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") })
            XCTAssertTrue(String(decoding: lookup.pending, as: UTF8.self).hasPrefix("HTTP/1.1 502"),
                          String(decoding: lookup.pending, as: UTF8.self))

            let wal = data.appendingPathComponent("traffic.sqlite-wal").path
            let walSize = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
            XCTAssertEqual(walSize, 0, "the write-ahead log was folded into the capture file")
            let flows = try flowsInTheMainFile(of: data)
            let paths = flows.map(\.path)
            for index in 0..<3 {
                XCTAssertTrue(paths.contains("/bytes/\(1000 + index)"), "\(paths)")
            }
            XCTAssertTrue(paths.contains("/status/204"), "\(paths)")
            let stuck = flows.first { $0.host == "stuckname" }
            // Cut short by the shutdown, and recorded as such (not as a client or origin closing).
            let shutDown = "the proxy was shut down (SIGTERM or Ctrl-C) before the exchange completed"
            XCTAssertEqual(stuck?.error, shutDown)
            XCTAssertEqual(stuck?.note, "as the exchange saw it: cannot resolve host 'stuckname': the proxy is shutting down")
            let interrupted = flows.first { $0.path == "/bytes/\(4 << 30)" }
            XCTAssertNotNil(interrupted, "the interrupted download is recorded: \(paths)")
            XCTAssertEqual(interrupted?.error, shutDown)
            XCTAssertNil(flows.first { $0.path == "/status/204" }?.error, "a finished exchange keeps no error")
        }
    }

    /// A second signal while the proxy is stopping ends it at once (exit status 128 + signal).
    func testASecondSignalExitsAtOnce() async throws {
        try await withStuckDNSProxy { proxy, origin, dns, _ in
            let (download, lookup) = try await startDownloadAndStuckLookup(proxy: proxy, origin: origin, dns: dns)
            defer {
                download.close()
                lookup.close()
            }
            proxy.send(SIGTERM)
            proxy.send(SIGINT)
            let status = await proxy.waitForExit(timeout: 20)
            XCTAssertTrue(status == 128 + SIGINT || status == 128 + SIGTERM, "exit status \(String(describing: status))")
            XCTAssertTrue(proxy.output.contains("again: exiting without waiting"), proxy.output)
        }
    }
}
