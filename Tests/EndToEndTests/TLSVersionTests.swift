import Foundation
import ProxyCore
import TestSupport
import XCTest

/// The minimum TLS version on both legs, with real handshakes: TLS 1.2 by default
/// (`--client-tls-min` / `--upstream-tls-min` lower or raise it). A TLS 1.0/1.1 client gets a
/// `protocol_version` alert and a CONNECT flow whose note names its version and the flag, and
/// its host is not pinned; an origin speaking only TLS 1.0 (with a non-forward-secret suite,
/// `openssl s_server -tls1 -cipher AES128-SHA`) gets a 502 saying so. Lowered minimums make both
/// work, and the flow shows each leg's version.
final class TLSVersionTests: XCTestCase {
    /// curl limited to one old TLS version (OpenSSL 3 needs security level 0 for it).
    private func oldTLSArguments(_ version: TLSProtocolVersion) -> [String] {
        ["--tlsv\(version.argument)", "--tls-max", version.argument, "--ciphers", "DEFAULT@SECLEVEL=0"]
    }

    // MARK: client leg

    /// TLS 1.0 and 1.1 clients are refused with a protocol_version alert, three times each (as
    /// many as would pin on ambiguous failures); every attempt is a CONNECT flow whose note names
    /// the version and the flag, and the host is never pinned: a modern client is decrypted after.
    func testOldClientsAreRefusedByDefaultAndNotPinned() async throws {
        let tls = try TLSFixtures(directory: try makeTemporaryDirectory("tls").url)
        try await TLSProxySetup.withOrigin(try tls.originContext(for: "localhost")) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                let url = "https://localhost:\(origin.port)/echo"
                var attempts = 0
                for version in [TLSProtocolVersion.tls10, .tls11] {
                    for _ in 0..<3 {
                        let refused = try await Curl.viaProxy(
                            setup.proxy.port,
                            oldTLSArguments(version) + ["--cacert", setup.tls.proxyCAFile.path, "-o", "/dev/null", url])
                        attempts += 1
                        XCTAssertEqual(refused.exitCode, 35, refused.summary)
                        XCTAssertTrue(refused.stderr.contains("protocol version"), refused.summary)
                    }
                    let flows = try await setup.proxy.waitForFlows(count: attempts)
                    XCTAssertEqual(flows.count, attempts)
                    for flow in flows.suffix(3) {
                        XCTAssertEqual(flow.method, "CONNECT")
                        XCTAssertEqual(flow.note,
                                       "client offered only \(version.name); use --client-tls-min \(version.argument) to allow it")
                        XCTAssertTrue(flow.error?.contains("TLS handshake with the client failed") ?? false,
                                      "\(String(describing: flow.error))")
                    }
                }
                XCTAssertNil(setup.pins.pins(for: "localhost").first, "a version refusal must not pin the host")

                let modern = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--cacert", setup.tls.proxyCAFile.path])
                XCTAssertEqual(modern.status, 200, modern.result.summary)
                let last = try await setup.proxy.waitForFlows(count: attempts + 1).last
                XCTAssertEqual(last?.scheme, "https", "the host must still be decrypted")
                XCTAssertEqual(last?.tls?.clientVersion, "TLSv1.3")
            }
        }
    }

    /// With `--client-tls-min 1.0` a TLS 1.0 client is decrypted; the flow shows TLS 1.0 on the
    /// client leg and TLS 1.3 on the origin's.
    func testOldClientIsAcceptedWithLowerMinimum() async throws {
        let tls = try TLSFixtures(directory: try makeTemporaryDirectory("tls").url)
        try await TLSProxySetup.withOrigin(try tls.originContext(for: "localhost")) { origin in
            try await TLSProxySetup.run(tls: tls, clientMinimum: .tls10) { setup in
                let fetched = try await Curl.fetch(
                    viaProxy: setup.proxy.port, "https://localhost:\(origin.port)/echo",
                    oldTLSArguments(.tls10) + ["--cacert", setup.tls.proxyCAFile.path])
                XCTAssertEqual(fetched.status, 200, fetched.result.summary)
                let flow = try await setup.proxy.waitForFlows(count: 1).last
                XCTAssertEqual(flow?.tls?.clientVersion, "TLSv1")
                XCTAssertEqual(flow?.tls?.upstreamVersion, "TLSv1.3")
                XCTAssertNil(setup.pins.pins(for: "localhost").first)
            }
        }
    }

    // MARK: upstream leg

    /// An origin offering only TLS 1.0 with AES128-SHA (no forward secrecy) is refused by
    /// default: 502 `tls_protocol_error` naming its version and the flag, on the flow too.
    func testTLS10OnlyOriginIsRefusedByDefault() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let origin = try await OpenSSLServer.start(in: scratch, rsa: true, arguments: ["-tls1", "-cipher", "AES128-SHA@SECLEVEL=0"])
        defer { origin.stop() }
        try await TLSProxySetup.run(tls: try TLSFixtures(directory: scratch), upstreamCA: origin.certificateFile) { setup in
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, "https://localhost:\(origin.port)/",
                                               ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.status, 502, fetched.result.summary)
            let reason = "origin offers only TLS 1.0; use --upstream-tls-min 1.0 to allow it"
            XCTAssertTrue(fetched.bodyText.contains(reason), fetched.bodyText + "\n" + origin.output)
            XCTAssertTrue(fetched.header("Proxy-Status")?.contains("tls_protocol_error") ?? false,
                          "\(String(describing: fetched.header("Proxy-Status")))")
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertTrue(flow?.error?.contains(reason) ?? false, "\(String(describing: flow?.error))")
        }
    }

    /// With `--upstream-tls-min 1.0` the same origin answers; the flow shows TLS 1.3 towards the
    /// client and TLS 1.0 towards the origin.
    func testTLS10OnlyOriginWorksWithLowerMinimum() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let origin = try await OpenSSLServer.start(in: scratch, rsa: true, arguments: ["-tls1", "-cipher", "AES128-SHA@SECLEVEL=0"])
        defer { origin.stop() }
        try await TLSProxySetup.run(tls: try TLSFixtures(directory: scratch), upstreamMinimum: .tls10,
                                    upstreamCA: origin.certificateFile) { setup in
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, "https://localhost:\(origin.port)/",
                                               ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.status, 200, fetched.result.summary + "\n" + fetched.bodyText + "\n" + origin.output)
            let flow = try await setup.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.tls?.clientVersion, "TLSv1.3")
            XCTAssertEqual(flow?.tls?.upstreamVersion, "TLSv1")
        }
    }

    /// An origin on TLS 1.2 that offers only a suite without forward secrecy (AES128-GCM-SHA256,
    /// RSA key exchange) is refused by default, the 502 saying it is the cipher suites.
    func testLegacyCipherOnlyOriginIsRefusedNamingTheCiphers() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let origin = try await OpenSSLServer.start(in: scratch, rsa: true, arguments: ["-tls1_2", "-cipher", "AES128-GCM-SHA256"])
        defer { origin.stop() }
        try await TLSProxySetup.run(tls: try TLSFixtures(directory: scratch), upstreamCA: origin.certificateFile) { setup in
            let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, "https://localhost:\(origin.port)/",
                                               ["--cacert", setup.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.status, 502, fetched.result.summary)
            XCTAssertTrue(fetched.bodyText.contains("origin offers only legacy cipher suites"), fetched.bodyText)
        }
    }
}
