import ChildProcess
import Foundation
import ProxyModel
import XCTest

/// Issue 14 §1 with real clients: auto-pin never traps a user who has not installed the CA yet,
/// and pins are per client (address + ClientHello fingerprint) and host.
final class PinsPerClientTests: XCTestCase {
    private static let untrustedNote =
        "this client does not trust the ProxyApp CA yet: install it from http://proxyapp.cert/"

    /// The classic first try: curl without the CA (it sends an unknown-CA alert), then curl with
    /// `--cacert ProxyCA.pem`. Was: the host pinned for 7 days and the second curl failed (60).
    /// Now nothing is pinned, the first flow says to install the CA, the second is intercepted.
    func testCurlBeforeTheCAIsInstalledPinsNothing() async throws {
        try await InterceptingFixture.run(pinLimits: .init()) { fixture in
            let pins = try XCTUnwrap(fixture.pins)
            let first = try await Curl.viaProxy(fixture.proxy.port, ["-o", "/dev/null", fixture.tlsURL("/echo")])
            XCTAssertEqual(first.exitCode, 60, "curl does not trust the proxy's CA: \(first.summary)")
            let refused = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(refused?.note, Self.untrustedNote)
            XCTAssertTrue(refused?.error?.hasPrefix("TLS handshake with the client failed: client sent") ?? false,
                          "\(String(describing: refused?.error))")
            XCTAssertEqual(pins.pins(for: "localhost"), [])

            let second = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo"),
                                              ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(second.status, 200, second.result.summary)
            let intercepted = try await fixture.proxy.waitForFlows(count: 2).last
            XCTAssertEqual(intercepted?.scheme, "https", "decrypted, not passed through")
            XCTAssertEqual(intercepted?.path, "/echo")
            pins.flush()
            XCTAssertEqual(try fixture.proxy.repository.pinnedDomains(), [])
        }
    }

    /// curl trusts the CA (a completed handshake to host A), then refuses host B (it trusts only
    /// the origin CA there, as a pinning app would): B is pinned for this curl, which then passes
    /// through to B (and verifies the origin itself), while it is still intercepted on A, and a
    /// second client on the same machine with another ClientHello (TLS 1.2 at most) is still
    /// intercepted on B.
    func testTrustedClientRefusingAHostPinsItForItselfOnly() async throws {
        let hostB = "b.example.invalid"
        try await InterceptingFixture.run(namedOriginHost: hostB, pinLimits: .init()) { fixture in
            let pins = try XCTUnwrap(fixture.pins)
            let origin = try XCTUnwrap(fixture.namedOrigin)
            try fixture.useRules("""
                rules:
                  - name: b to loopback
                    match: { host: "*.example.invalid" }
                    dns: { to: 127.0.0.1 }
                """)
            let urlB = "https://\(hostB):\(origin.port)/echo"
            let proxyCA = ["--cacert", fixture.tls.proxyCAFile.path]
            let originCA = ["--cacert", fixture.tls.originCAFile.path]

            let trusting = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo"), proxyCA)
            XCTAssertEqual(trusting.status, 200, trusting.result.summary)
            _ = try await fixture.proxy.waitForFlows(count: 1)

            let refusing = try await Curl.viaProxy(fixture.proxy.port, originCA + ["-o", "/dev/null", urlB])
            XCTAssertEqual(refusing.exitCode, 60, refusing.summary)
            let refused = try await fixture.proxy.waitForFlows(count: 2).last
            let pin = try XCTUnwrap(pins.pins(for: hostB).first, "B pinned; flow: \(String(describing: refused))")
            XCTAssertEqual(pins.pins(for: hostB).count, 1)
            let curl = try XCTUnwrap(pin.client, "the ClientHello is the same whatever --cacert names")
            XCTAssertEqual(curl.address, "127.0.0.1")
            XCTAssertEqual(pin.alert, "unknown_ca")
            XCTAssertEqual(pin.tlsVersion, "TLS 1.3")
            XCTAssertEqual(refused?.note, "pinned \(hostB) for \(curl): \(pin.reason); "
                           + "to undo: `p` in the TUI, or `proxyapp pins remove \(hostB)`")

            // The same curl passes through to B: the origin's own certificate is what it verifies.
            let passed = try await Curl.fetch(viaProxy: fixture.proxy.port, urlB, originCA)
            XCTAssertEqual(passed.status, 200, passed.result.summary)
            let tunnel = try await fixture.proxy.waitForFlows(count: 3).last
            XCTAssertEqual(tunnel?.kind, .tunnel)
            // It may go on with how the relay ended (curl sometimes resets after its answer: a
            // timing of the client's, noted as ordinary), so only its start is fixed.
            XCTAssertTrue(tunnel?.note?.hasPrefix(refused?.note ?? "-") == true,
                          "the passed-through row says why and how to undo it: \(tunnel?.note ?? "nil")")

            // Still intercepted on A.
            let onA = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo"), proxyCA)
            XCTAssertEqual(onA.status, 200, onA.result.summary)
            let stillDecrypted = try await fixture.proxy.waitForFlows(count: 4).last
            XCTAssertEqual(stillDecrypted?.scheme, "https")

            // Another client on the same machine: another ClientHello, still intercepted on B.
            let browser = try await Curl.fetch(viaProxy: fixture.proxy.port, urlB, proxyCA + ["--tls-max", "1.2"])
            XCTAssertEqual(browser.status, 200, browser.result.summary)
            let decrypted = try await fixture.proxy.waitForFlows(count: 5).last
            XCTAssertEqual(decrypted?.scheme, "https")
            XCTAssertEqual(decrypted?.host, hostB)
            XCTAssertEqual(pins.pins(for: hostB).map(\.client), [curl], "nothing pinned for the second client")
        }
    }

    /// A client copying a trusted client's ClientHello (the same scripted client) from another
    /// address is not trusted: its rejection pins nothing. The trusted one's rejection pins the
    /// host for its own address only.
    func testCopiedFingerprintFromAnotherAddressPinsNothing() async throws {
        try await InterceptingFixture.run(pinLimits: .init()) { fixture in
            let pins = try XCTUnwrap(fixture.pins)
            try await InterceptionHardeningTests.trustTheProxy(fixture, sourceAddress: "127.0.0.1")
            let spoofed = try await ScriptedTLSClient.run(.alertAfterFlight, port: fixture.proxy.port,
                                                          serverName: "bank.example", connectTarget: "127.0.0.1:9",
                                                          sourceAddress: "127.0.0.2")
            XCTAssertEqual(spoofed.exitCode, 0, spoofed.errors)
            let refused = try await fixture.proxy.waitForFlows(count: 2).last
            XCTAssertTrue(refused?.clientAddress.hasPrefix("127.0.0.2:") ?? false, "\(String(describing: refused))")
            XCTAssertEqual(refused?.note, Self.untrustedNote)
            XCTAssertEqual(pins.pins(for: "bank.example"), [])

            let genuine = try await ScriptedTLSClient.run(.alertAfterFlight, port: fixture.proxy.port,
                                                          serverName: "bank.example", connectTarget: "127.0.0.1:9",
                                                          sourceAddress: "127.0.0.1")
            XCTAssertEqual(genuine.exitCode, 0, genuine.errors)
            _ = try await fixture.proxy.waitForFlows(count: 3)
            let pinned = try XCTUnwrap(pins.pins(for: "bank.example").first?.client)
            XCTAssertEqual(pinned.address, "127.0.0.1")
            let sameStackElsewhere = ClientIdentity(address: "127.0.0.2", fingerprint: pinned.fingerprint)
            XCTAssertNil(pins.pin(for: "bank.example", client: sameStackElsewhere))
        }
    }
}
