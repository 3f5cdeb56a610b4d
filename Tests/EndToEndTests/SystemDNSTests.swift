import ChildProcess
import FakeDNS
import Foundation
import TestSupport
import XCTest

/// `proxyapp run` resolves as the system would, on c-ares: `/etc/hosts` answers first, then the
/// DNS server (`--dns-server` here); `HOSTALIASES` is ignored (c-ares would open that file on its
/// one thread, and a FIFO there would hold every lookup).
///
/// The proxy runs in a private mount namespace (`unshare -rm`, no root needed) where the test's
/// own hosts file is bind-mounted over `/etc/hosts`; skipped where user namespaces are off.
final class SystemDNSTests: XCTestCase {
    private static let unshare = "/usr/bin/unshare"
    /// Execs the proxy with `$HOSTS_FILE` mounted over `/etc/hosts`.
    private static let launcher = [unshare, "-rm", "--", "/bin/sh", "-c", "mount --bind \"$HOSTS_FILE\" /etc/hosts && exec \"$0\" \"$@\""]

    func testHostsFileAnswersFirstAndHostAliasesIsIgnored() async throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: Self.unshare), "needs unshare (util-linux)")
        let data = try makeTemporaryDirectory("system-dns").url
        let hosts = data.appendingPathComponent("hosts")
        try "127.0.0.1 only-in-hosts.test hostsonly\n".write(to: hosts, atomically: true, encoding: .utf8)
        let probe = try await ChildProcess.run(Self.unshare, ["-rm", "--", "/bin/true"], timeout: 10)
        try XCTSkipUnless(probe.exitCode == 0, "no private mount namespace here: \(String(decoding: probe.stderr, as: UTF8.self))")
        let fifo = data.appendingPathComponent("aliases.fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)

        let dns = try await FakeDNSServer.start { name in
            name == "dns-only.test" ? .addresses(["127.0.0.1"]) : .failure(rcode: 3)
        }
        let origin = try await TestOrigin.start()
        let proxy: ProxyAppProcess
        do {
            proxy = try await ProxyAppProcess.startHeadless(
                executable: try proxyAppExecutable(), dataDirectory: data.appendingPathComponent("data"),
                arguments: ["--dns-server", dns.argument],
                environment: ["HOSTS_FILE": hosts.path, "HOSTALIASES": fifo.path], launcher: Self.launcher)
        } catch {
            await origin.shutdown()
            await dns.shutdown()
            throw error
        }
        do {
            for host in ["hostsonly", "only-in-hosts.test", "dns-only.test"] {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://\(host):\(origin.port)/bytes/10", timeout: 15)
                XCTAssertEqual(fetched.status, 200, "\(host): \(fetched.bodyText)")
            }
            let missing = try await Curl.fetch(viaProxy: proxy.port, "http://missing.test:\(origin.port)/", timeout: 15)
            XCTAssertEqual(missing.status, 502)
            XCTAssertEqual(missing.bodyText, "cannot resolve host 'missing.test': no such name in DNS (NXDOMAIN)\n")
            XCTAssertFalse(dns.queriedNames.contains { $0.hasPrefix("hostsonly") || $0.hasPrefix("only-in-hosts") },
                           "hosts-file names never reach DNS: \(dns.queriedNames)")
        } catch {
            await proxy.stop()
            await origin.shutdown()
            await dns.shutdown()
            throw error
        }
        await proxy.stop()
        await origin.shutdown()
        await dns.shutdown()
    }
}
