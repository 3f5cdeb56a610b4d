import CaptureStore
import Foundation
import Logging
import PersistentPins
import ProxyEngine
import ProxyModel
import TestSupport
import XCTest

/// HTTPS through the proxy with curl: decrypted and captured when the client trusts the proxy's
/// CA, passed through untouched once a client that does not trust it has pinned the host, and
/// every TLS failure answered with a status and a reason.
///
/// Each test has its own CAs (`TLSFixtures`), TLS origin and proxy; the proxy trusts the origin
/// CA as `--upstream-ca` would make it.
final class HTTPSInterceptionTests: XCTestCase {
    private struct Setup {
        var proxy: ProxyHarness
        var origin: TestOrigin
        var tls: TLSFixtures
        var pins: PersistentPinRegistry
    }

    /// Starts the CAs, an HTTPS origin whose certificate names `originHost` (or a certificate
    /// nobody trusts), and an intercepting proxy; stops them after `body`.
    private func withHTTPS(originHost: String = "localhost", untrustedOrigin: Bool = false,
                           _ body: (Setup) async throws -> Void) async throws {
        let scratch = try TemporaryDirectory("proxyapp-https")
        defer { scratch.remove() }
        let tls = try TLSFixtures(directory: scratch.url)
        let originContext = untrustedOrigin
            ? try TLSFixtures.untrustedOriginContext(for: originHost) : try tls.originContext(for: originHost)
        let origin = try await TestOrigin.start(tls: originContext)
        let logger = Logger(label: "proxyapp.e2e.pins", factory: { _ in SwiftLogNoOpLogHandler() })
        var pins: PersistentPinRegistry?
        let proxy: ProxyHarness
        do {
            proxy = try await ProxyHarness.start(interception: { repository in
                let registry = try PersistentPinRegistry(repository: repository, ttl: 3600, logger: logger)
                pins = registry
                return try tls.interception(pins: registry)
            }, { configuration in
                configuration.rootCertificate = RootCertificateDownload(
                    der: tls.proxyCA.certificateDER, pem: tls.proxyCA.certificatePEM,
                    sha256Fingerprint: tls.proxyCA.sha256Fingerprint, name: "ProxyApp Test CA")
            })
        } catch {
            await origin.shutdown()
            throw error
        }
        do {
            try await body(Setup(proxy: proxy, origin: origin, tls: tls, pins: pins!))
        } catch {
            await proxy.shutdown()
            await origin.shutdown()
            throw error
        }
        await proxy.shutdown()
        await origin.shutdown()
    }

    // MARK: decrypted

    /// A client trusting the proxy's CA gets the origin's answer, and the flow is captured
    /// decrypted: scheme https, the path, the status, and TLS details of both sides.
    func testTrustedClientIsDecryptedAndCaptured() async throws {
        try await withHTTPS { setup in
            let url = "https://localhost:\(setup.origin.port)/echo?q=1"
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.header("X-Origin-URI"), "/echo?q=1")
            let flows = try await setup.proxy.waitForFlows(count: 1)
            guard let flow = flows.last else { return XCTFail("no flow captured") }
            XCTAssertEqual(flow.kind, .http)
            XCTAssertEqual(flow.scheme, "https")
            XCTAssertEqual(flow.host, "localhost")
            XCTAssertEqual(flow.port, setup.origin.port)
            XCTAssertEqual(flow.path, "/echo?q=1")
            XCTAssertEqual(flow.status, 200)
            XCTAssertNil(flow.error)
            XCTAssertEqual(flow.tls?.sni, "localhost")
            XCTAssertEqual(flow.tls?.alpn, "h2", "curl offers h2 first, and gets it")
            XCTAssertNotNil(flow.tls?.clientVersion)
            XCTAssertNotNil(flow.tls?.upstreamVersion)
            XCTAssertTrue(flow.tls?.upstreamSubject?.contains("localhost") ?? false, "\(String(describing: flow.tls))")
            XCTAssertEqual(flow.serverAddress, "127.0.0.1", "the origin address of a decrypted exchange")
            XCTAssertTrue(flow.tls?.upstreamIssuer?.contains("Test Origin CA") ?? false, "\(String(describing: flow.tls))")
            XCTAssertGreaterThanOrEqual(flow.timings.tls, 0)
            XCTAssertNil(setup.pins.pins(for: "localhost").first, "a completed handshake must never pin")
        }
    }

    /// Clients send no SNI for an IP literal: the leaf is minted for the CONNECT target with an
    /// IP SAN, which curl verifies.
    func testIPLiteralTargetWithoutSNI() async throws {
        try await withHTTPS(originHost: "127.0.0.1") { setup in
            let url = "https://127.0.0.1:\(setup.origin.port)/echo"
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertEqual(flow?.host, "127.0.0.1")
            XCTAssertNil(flow?.tls?.sni ?? nil)
        }
    }

    /// Upstream TLS connections are pooled per event loop and reused across client
    /// connections: four client connections of two requests each open at most one origin
    /// connection per proxy event loop (the harness runs two).
    func testUpstreamTLSConnectionsAreReusedAcrossClientConnections() async throws {
        try await withHTTPS { setup in
            let url = "https://localhost:\(setup.origin.port)/bytes/10"
            for _ in 0..<4 {
                let result = try await Curl.viaProxy(
                    setup.proxy.port, ["--cacert", setup.tls.proxyCAFile.path, "-o", "/dev/null", url, "-o", "/dev/null", url])
                XCTAssertEqual(result.exitCode, 0, result.summary)
            }
            let flows = try await setup.proxy.waitForFlows(count: 8)
            XCTAssertEqual(flows.filter { $0.status == 200 }.count, 8)
            XCTAssertLessThanOrEqual(setup.origin.log.acceptedConnections, 2,
                                     "client connections should share pooled upstream TLS connections")
            XCTAssertEqual(flows.filter { $0.timings.tls >= 0 }.count, setup.origin.log.acceptedConnections,
                           "only exchanges that opened a connection have a TLS phase")
        }
    }

    // MARK: failures

    /// An origin certificate the proxy cannot verify: 502 naming the reason, on the flow too.
    func testUntrustedOriginCertificateIsA502WithReason() async throws {
        try await withHTTPS(untrustedOrigin: true) { setup in
            let url = "https://localhost:\(setup.origin.port)/echo"
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 502)
            XCTAssertTrue(fetched.bodyText.contains("is not trusted"), fetched.bodyText)
            XCTAssertTrue(fetched.header("Proxy-Status")?.contains("tls_certificate_error") ?? false)
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertTrue(flow?.error?.contains("is not trusted") ?? false, "\(String(describing: flow?.error))")
        }
    }

    // MARK: auto-pin

    /// A client that trusted the proxy's CA once (a completed handshake) and then refuses it for
    /// a host fails its handshake; that pins the host for it, and its next connection passes
    /// through untouched (curl then verifies the origin's own certificate) and is recorded as a
    /// pinned tunnel.
    func testRejectingClientPinsHostOverTLS12() async throws {
        try await assertRejectionPins(tlsArguments: ["--tlsv1.2", "--tls-max", "1.2"])
    }

    /// The same over TLS 1.3, where an OpenSSL client's alert arrives after the keys changed.
    func testRejectingClientPinsHostOverTLS13() async throws {
        try await assertRejectionPins(tlsArguments: ["--tlsv1.3"])
    }

    private func assertRejectionPins(tlsArguments: [String]) async throws {
        try await withHTTPS { setup in
            let url = "https://localhost:\(setup.origin.port)/echo"
            // The same curl trusts the proxy's CA first: its ClientHello, and so its identity, is
            // the same whatever --cacert names.
            let trusted = try await Curl.fetch(viaProxy: setup.proxy.port, url,
                                               tlsArguments + ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(trusted.status, 200, trusted.result.summary)
            _ = try await setup.proxy.waitForFlows(count: 1)
            // Trusts only the origin's CA: the proxy's leaf is rejected.
            let rejected = try await Curl.viaProxy(
                setup.proxy.port, tlsArguments + ["--cacert", setup.tls.originCAFile.path, "-o", "/dev/null", url])
            XCTAssertNotEqual(rejected.exitCode, 0, "curl must refuse the proxy's certificate")
            let failed = try await setup.proxy.waitForFlows(count: 2).last
            XCTAssertTrue(failed?.error?.contains("TLS handshake with the client failed") ?? false,
                          "\(String(describing: failed?.error))")
            guard let pin = setup.pins.pins(for: "localhost").first else {
                return XCTFail("the host was not pinned after an explicit rejection; flow: \(String(describing: failed))")
            }
            XCTAssertFalse(pin.reason.isEmpty)

            let passed = try await Curl.fetch(
                viaProxy: setup.proxy.port, url, tlsArguments + ["--cacert", setup.tls.originCAFile.path])
            XCTAssertEqual(passed.result.exitCode, 0, passed.result.summary)
            XCTAssertEqual(passed.status, 200)
            let flows = try await setup.proxy.waitForFlows(count: 3)
            guard let tunnel = flows.last else { return XCTFail("no flow for the pinned tunnel") }
            XCTAssertEqual(tunnel.kind, .tunnel)
            XCTAssertTrue(tunnel.note?.contains("pinned") ?? false, "\(String(describing: tunnel.note))")
            XCTAssertGreaterThan(tunnel.bytesDown, 0)
        }
    }

    // MARK: other tunnel content

    /// Plain HTTP inside a CONNECT tunnel is proxied and captured as HTTP.
    func testPlainHTTPInsideConnectIsProxied() async throws {
        try await withHTTPS { setup in
            let plain = try await TestOrigin.start()
            defer { Task { await plain.shutdown() } }
            let url = "http://127.0.0.1:\(plain.port)/echo"
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--proxytunnel"])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.kind, .http)
            XCTAssertEqual(flow?.scheme, "http")
            XCTAssertEqual(flow?.path, "/echo")
            XCTAssertNil(flow?.tls)
            await plain.shutdown()
        }
    }

    /// Bytes that are neither TLS nor HTTP are relayed untouched, as before interception.
    func testOpaqueBytesAreRelayed() async throws {
        try await withHTTPS { setup in
            let echo = try await TCPEchoServer.start()
            let client = try RawClient(port: setup.proxy.port)
            try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            try client.send("\u{1}binary-ish payload")
            XCTAssertEqual(try client.receive(count: 19, timeout: 10), Data("\u{1}binary-ish payload".utf8))
            client.close()
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.kind, .tunnel)
            XCTAssertEqual(flow?.bytesUp, 19)
            await echo.shutdown()
        }
    }

    /// A server that speaks first (SMTP, IMAP) gets a relay as soon as it speaks while the
    /// client is silent (no timeout involved); its greeting then reaches the client.
    func testSilentClientGetsARelayForServerFirstProtocols() async throws {
        try await withHTTPS { setup in
            let greeter = try await TCPEchoServer.start(greeting: "220 smtp.test ESMTP ready\r\n")
            let client = try RawClient(port: setup.proxy.port)
            try client.send("CONNECT 127.0.0.1:\(greeter.port) HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            XCTAssertEqual(try client.receive(count: 27, timeout: 10), Data("220 smtp.test ESMTP ready\r\n".utf8))
            try client.send("EHLO me\r\n")
            XCTAssertEqual(try client.receive(count: 9, timeout: 10), Data("EHLO me\r\n".utf8))
            client.close()
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.kind, .tunnel)
            XCTAssertEqual(flow?.bytesDown, 36)
            await greeter.shutdown()
        }
    }

    // MARK: the CA download

    /// The root CA is served by the proxy itself and through it at the reserved host.
    func testRootCertificateIsServed() async throws {
        try await withHTTPS { setup in
            let direct = try await Curl.run(["-o", "-", "http://127.0.0.1:\(setup.proxy.port)/ProxyCA.cer"])
            XCTAssertEqual(direct.exitCode, 0, direct.summary)
            XCTAssertEqual([UInt8](direct.stdout), setup.tls.proxyCA.certificateDER)
            let viaProxy = try await Curl.fetch(viaProxy: setup.proxy.port, "http://proxyapp.cert/ProxyCA.pem")
            XCTAssertEqual(viaProxy.status, 200)
            XCTAssertEqual(viaProxy.bodyText, setup.tls.proxyCA.certificatePEM)
            XCTAssertEqual(viaProxy.header("Content-Type"), "application/x-pem-file")
            let page = try await Curl.fetch(viaProxy: setup.proxy.port, "http://proxyapp.cert/")
            XCTAssertTrue(page.bodyText.contains("/ProxyCA.cer"))
            XCTAssertTrue(page.bodyText.contains(setup.tls.proxyCA.sha256Fingerprint))
        }
    }
}
