import ChildProcess
import Foundation
import TestSupport
import XCTest

/// `proxyapp ca regenerate` against a real running `proxyapp run`: refused, naming the proxy's
/// pid and listen address, with the CA untouched (the proxy would keep signing with the old one
/// and clients trusting the new one would fail and pin their hosts). After `kill -9` (no clean
/// exit, the marker file stays behind) it works, and the next proxy signs with the new CA.
final class CARegenerateWhileRunningTests: XCTestCase {
    func testRegenerateIsRefusedWhileAProxyRunsAndWorksAfterKill9() async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                       "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it first")
        let data = try makeTemporaryDirectory("ca-running").url
        let certificate = data.appendingPathComponent("ca/ProxyCA.pem")
        let proxy = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: data)
        addTeardownBlock { proxy.killHard() }
        let original = try Data(contentsOf: certificate)

        let refused = try await runProxyApp(executable, ["ca", "regenerate", "--data-dir", data.path])
        XCTAssertNotEqual(refused.status, 0, refused.output)
        XCTAssertTrue(refused.output.contains("pid \(proxy.processIdentifier), listening on 127.0.0.1:\(proxy.port)"), refused.output)
        XCTAssertTrue(refused.output.contains("Stop it first"), refused.output)
        XCTAssertEqual(try Data(contentsOf: certificate), original, "the CA must be untouched")

        proxy.killHard()
        let markers = try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("run").path)
        XCTAssertEqual(markers.sorted(), ["control.sock", "proxy-\(proxy.processIdentifier).lock"],
                       "kill -9 leaves the marker file (and the control socket's file, replaced by the next proxy) behind")
        let regenerated = try await runProxyApp(executable, ["ca", "regenerate", "--data-dir", data.path])
        XCTAssertEqual(regenerated.status, 0, regenerated.output)
        let renewed = try Data(contentsOf: certificate)
        XCTAssertNotEqual(renewed, original)

        // The next proxy signs with the new CA: a client trusting only it is decrypted.
        let next = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: data,
                                                           arguments: ["--insecure-upstream"])
        addTeardownBlock { next.killHard() }
        let origin = try await TestOrigin.start(tls: try TLSFixtures.untrustedOriginContext(for: "localhost"))
        let fetched = try await Curl.fetch(viaProxy: next.port, "https://localhost:\(origin.port)/echo",
                                           ["--cacert", certificate.path])
        XCTAssertEqual(fetched.status, 200, fetched.result.summary)
        await origin.shutdown()
        await next.stop()
    }
}
