import Foundation
import ProxyTLS
import TestSupport
import XCTest

/// Each way the TLS leg to an origin fails gets a 502 that says what actually failed, with real
/// handshakes: an origin requiring a client certificate (`openssl s_server -Verify 1`, TLS 1.3
/// and 1.2), an expired or not yet valid certificate (with its date), a certificate for other
/// names than the SNI the client sent (which differs from the CONNECT host), a self-signed one,
/// one from an unknown CA (named).
final class UpstreamTLSReasonTests: XCTestCase {
    /// Fetches `url` through the proxy (trusting the proxy's CA) and checks the 502, its
    /// Proxy-Status error type, and that the flow records the same reason.
    private func assert502(_ setup: TLSProxySetup, _ url: String, _ arguments: [String] = [], contains reason: String,
                           proxyStatus: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, ["--cacert", setup.tls.proxyCAFile.path] + arguments)
        XCTAssertEqual(fetched.status, 502, fetched.result.summary, file: file, line: line)
        XCTAssertTrue(fetched.bodyText.contains(reason), "body: \(fetched.bodyText)", file: file, line: line)
        XCTAssertTrue(fetched.header("Proxy-Status")?.contains(proxyStatus) ?? false,
                      "Proxy-Status: \(String(describing: fetched.header("Proxy-Status")))", file: file, line: line)
        let flows = try await setup.proxy.waitForFlows(count: 1)
        XCTAssertTrue(flows.last?.error?.contains(reason) ?? false, "flow error: \(String(describing: flows.last?.error))",
                      file: file, line: line)
    }

    /// TLS 1.3: the handshake completes on our side and the origin's `certificate_required`
    /// alert arrives while the response is awaited; it used to read "closed the connection
    /// before a complete response".
    func testOriginRequiringAClientCertificateOverTLS13() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let origin = try await OpenSSLServer.start(in: scratch, arguments: ["-Verify", "1"])
        defer { origin.stop() }
        try await TLSProxySetup.run(tls: try TLSFixtures(directory: scratch), upstreamCA: origin.certificateFile) { setup in
            try await assert502(setup, "https://localhost:\(origin.port)/",
                                contains: "TLS handshake with localhost:\(origin.port) failed: origin requires a client certificate",
                                proxyStatus: "tls_protocol_error")
        }
    }

    /// TLS 1.2: the origin's refusal is a bare handshake_failure alert; the 502 names it and
    /// says what it may mean.
    func testOriginRequiringAClientCertificateOverTLS12() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let origin = try await OpenSSLServer.start(in: scratch, arguments: ["-Verify", "1", "-tls1_2"])
        defer { origin.stop() }
        try await TLSProxySetup.run(tls: try TLSFixtures(directory: scratch), upstreamCA: origin.certificateFile) { setup in
            try await assert502(setup, "https://localhost:\(origin.port)/",
                                contains: "the origin refused the handshake (handshake_failure alert): it may require a client certificate",
                                proxyStatus: "tls_protocol_error")
        }
    }

    /// An expired certificate from a trusted CA: the reason gives its expiry date.
    func testExpiredCertificateNamesItsDate() async throws {
        let tls = try TLSFixtures(directory: try makeTemporaryDirectory("tls").url)
        let mintedAt = Date().addingTimeInterval(-400 * 86_400)
        let expiry = try XCTUnwrap(CertificateFacts(try LeafCertificateMinter(authority: tls.originCA)
            .mint(host: "localhost", now: mintedAt).certificateChain[0])).notAfter
        let day = String(ISO8601DateFormatter().string(from: expiry).prefix(10))
        try await TLSProxySetup.withOrigin(try tls.originContext(for: "localhost", mintedAt: mintedAt)) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                try await assert502(setup, "https://localhost:\(origin.port)/echo", contains: "certificate expired on \(day)",
                                    proxyStatus: "tls_certificate_error")
            }
        }
    }

    func testNotYetValidCertificate() async throws {
        let tls = try TLSFixtures(directory: try makeTemporaryDirectory("tls").url)
        let context = try tls.originContext(for: "localhost", mintedAt: Date().addingTimeInterval(10 * 86_400))
        try await TLSProxySetup.withOrigin(context) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                try await assert502(setup, "https://localhost:\(origin.port)/echo", contains: "certificate is not yet valid: valid from",
                                    proxyStatus: "tls_certificate_error")
            }
        }
    }

    /// The client connects to 127.0.0.1 (the CONNECT host) with SNI `sni.test`; the origin's
    /// certificate names `localhost`. The reason names both the certificate's names and the SNI
    /// that was checked.
    func testNameMismatchNamesTheSNIThatWasChecked() async throws {
        let tls = try TLSFixtures(directory: try makeTemporaryDirectory("tls").url)
        try await TLSProxySetup.withOrigin(try tls.originContext(for: "localhost")) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                try await assert502(setup, "https://sni.test:\(origin.port)/echo",
                                    ["--connect-to", "sni.test:\(origin.port):127.0.0.1:\(origin.port)"],
                                    contains: "certificate is for localhost, not sni.test", proxyStatus: "tls_certificate_error")
                let flow = try await setup.proxy.waitForFlows(count: 1).last
                XCTAssertEqual(flow?.host, "127.0.0.1", "the CONNECT host differs from the SNI")
            }
        }
    }

    /// A self-signed certificate nobody trusts (openssl's own, for localhost), and a leaf from a
    /// CA the proxy does not know (named in the reason).
    func testSelfSignedAndUnknownIssuer() async throws {
        let scratch = try makeTemporaryDirectory("tls").url
        let tls = try TLSFixtures(directory: scratch)
        let selfSigned = try await OpenSSLServer.start(in: scratch, arguments: [])
        defer { selfSigned.stop() }
        try await TLSProxySetup.run(tls: tls) { setup in
            try await assert502(setup, "https://localhost:\(selfSigned.port)/", contains: "certificate is self-signed (CN=localhost)",
                                proxyStatus: "tls_certificate_error")
        }
        try await TLSProxySetup.withOrigin(try TLSFixtures.untrustedOriginContext(for: "localhost")) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                try await assert502(setup, "https://localhost:\(origin.port)/echo",
                                    contains: "certificate issued by an unknown CA (CN=Stranger CA", proxyStatus: "tls_certificate_error")
            }
        }
    }
}
