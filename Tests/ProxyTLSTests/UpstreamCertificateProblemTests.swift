import Foundation
import NIOSSL
import ProxyTLS
import XCTest

/// What the 502 says about an origin certificate the verifier refused: each stage of OpenSSL's
/// verification (chain building, extensions, dates) mapped to the reason a user can act on, and
/// the facts read from real certificates.
final class UpstreamCertificateProblemTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z

    private func facts(subject: String = "CN=origin.test", issuer: String = "CN=Origin CA", validFrom: Double = -86_400,
                       validUntil: Double = 86_400, selfIssued: Bool = false, serverAuth: Bool = true,
                       authority: Bool = false) -> CertificateFacts {
        CertificateFacts(subject: subject, issuer: issuer, notBefore: now.addingTimeInterval(validFrom),
                         notAfter: now.addingTimeInterval(validUntil), names: ["origin.test"], isSelfIssued: selfIssued,
                         allowsServerAuth: serverAuth, isCertificateAuthority: authority)
    }

    /// After the chain was built (a certificate passed), a failure is about dates, with the date.
    func testExpiredAndNotYetValid() {
        let expired = UpstreamCertificateProblem.diagnose(facts(validUntil: -3600), isLeaf: true, chainBuilt: true, now: now)
        XCTAssertEqual(expired, .expired(subject: "CN=origin.test", on: now.addingTimeInterval(-3600)))
        XCTAssertEqual(expired.reason, "certificate expired on 2025-06-15T14:06:40Z (CN=origin.test)")
        let early = UpstreamCertificateProblem.diagnose(facts(validFrom: 7200), isLeaf: true, chainBuilt: true, now: now)
        XCTAssertEqual(early.reason, "certificate is not yet valid: valid from 2025-06-15T17:06:40Z (CN=origin.test)")
        let signature = UpstreamCertificateProblem.diagnose(facts(), isLeaf: true, chainBuilt: true, now: now)
        XCTAssertEqual(signature, .badSignature(subject: "CN=origin.test"))
    }

    /// Before any certificate passed, the chain did not reach a trusted root: a self-signed leaf,
    /// else an unknown issuer (the leaf's issuer, or a self-signed root the origin sent along).
    /// That comes first even for an expired certificate, as in OpenSSL.
    func testTrustFailures() {
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(facts(issuer: "CN=origin.test", selfIssued: true), isLeaf: true,
                                                           chainBuilt: false, now: now).reason,
                       "certificate is self-signed (CN=origin.test); trust it with --upstream-ca FILE")
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(facts(validUntil: -10), isLeaf: true, chainBuilt: false, now: now).reason,
                       "certificate issued by an unknown CA (CN=Origin CA); trust that CA with --upstream-ca FILE")
        let root = facts(subject: "CN=Private Root", issuer: "CN=Private Root", selfIssued: true, authority: true)
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(root, isLeaf: false, chainBuilt: false, now: now),
                       .unknownIssuer(issuer: "CN=Private Root"))
    }

    /// A self-signed certificate that is out of date may be trusted (in --upstream-ca) or not:
    /// BoringSSL says the same either way. The reason names the dates and both possibilities;
    /// it said "self-signed; trust it with --upstream-ca" for an expired one already trusted.
    func testOutOfDateSelfSignedCertificatesNameTheirDates() {
        let leaf = facts(issuer: "CN=origin.test", validUntil: -3600, selfIssued: true)
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(leaf, isLeaf: true, chainBuilt: false, now: now).reason,
                       "certificate is self-signed (CN=origin.test) and expired on 2025-06-15T14:06:40Z: "
                       + "out of date, it fails even when trusted with --upstream-ca")
        let early = facts(issuer: "CN=origin.test", validFrom: 7200, selfIssued: true)
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(early, isLeaf: true, chainBuilt: false, now: now).reason,
                       "certificate is self-signed (CN=origin.test) and is not yet valid: valid from 2025-06-15T17:06:40Z: "
                       + "out of date, it fails even when trusted with --upstream-ca")
        let root = facts(subject: "CN=Private Root", issuer: "CN=Private Root", validUntil: -3600, selfIssued: true, authority: true)
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(root, isLeaf: false, chainBuilt: false, now: now).reason,
                       "the CA certificate CN=Private Root expired on 2025-06-15T14:06:40Z: "
                       + "out of date, it fails even when trusted with --upstream-ca")
    }

    /// The chain-extension stage: a leaf not for servers, an issuer that is not a CA.
    func testExtensionFailures() {
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(facts(serverAuth: false), isLeaf: true, chainBuilt: false, now: now),
                       .notForServers(subject: "CN=origin.test"))
        XCTAssertEqual(UpstreamCertificateProblem.diagnose(facts(subject: "CN=Intermediate"), isLeaf: false,
                                                           chainBuilt: false, now: now),
                       .notACertificateAuthority(subject: "CN=Intermediate"))
    }

    /// A name mismatch names the certificate's names and the name that was checked (the SNI);
    /// long lists are cut.
    func testNameMismatch() {
        XCTAssertEqual(UpstreamCertificateProblem.nameMismatch(names: ["a.test", "*.b.test", "10.0.0.1"], checked: "sni.test").reason,
                       "certificate is for a.test, *.b.test, 10.0.0.1, not sni.test")
        XCTAssertEqual(UpstreamCertificateProblem.nameMismatch(names: [], checked: "sni.test").reason,
                       "certificate is for no host name, not sni.test")
        let many = (1...40).map { "h\($0).test" }
        XCTAssertEqual(UpstreamCertificateProblem.nameMismatch(names: many, checked: "x.test").reason,
                       "certificate is for h1.test, h2.test, h3.test, h4.test, h5.test and 35 more, not x.test")
    }

    /// A hostile origin's names cannot break the line or the terminal that shows it: controls,
    /// bidi overrides and CR/LF become `?`, and a huge name is cut.
    func testHostileNamesArePrintable() {
        let reason = UpstreamCertificateProblem.nameMismatch(
            names: ["evil\r\nSet-Cookie: a=b", "\u{1B}]52;c;x\u{7}", "\u{202E}moc.knab", String(repeating: "a", count: 5000)],
            checked: "bank.test").reason
        XCTAssertFalse(reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x202E }, reason)
        XCTAssertTrue(reason.contains("evil??Set-Cookie: a=b, ?]52;c;x?, ?moc.knab, " + String(repeating: "a", count: 200) + "…"),
                      reason)
        XCTAssertLessThan(reason.count, 400)
        XCTAssertEqual(UpstreamCertificateProblem.selfSigned(subject: "CN=x\u{85}y").reason,
                       "certificate is self-signed (CN=x?y); trust it with --upstream-ca FILE")
    }

    /// Facts read from real certificates: a minted leaf (DNS and IP names, serverAuth, not a CA,
    /// signed by the root) and the root itself (self-issued CA).
    func testFactsFromCertificates() throws {
        let authority = try CertificateAuthority.generate(commonName: "Facts Test CA")
        let minter = try LeafCertificateMinter(authority: authority)
        let leaf = try XCTUnwrap(CertificateFacts(try minter.mint(host: "facts.test").certificateChain[0]))
        XCTAssertEqual(leaf.names, ["facts.test"])
        XCTAssertTrue(leaf.subject.contains("facts.test"), leaf.subject)
        XCTAssertTrue(leaf.issuer.contains("Facts Test CA"), leaf.issuer)
        XCTAssertFalse(leaf.isSelfIssued)
        XCTAssertTrue(leaf.allowsServerAuth)
        XCTAssertFalse(leaf.isCertificateAuthority)
        XCTAssertLessThan(leaf.notBefore, Date())
        XCTAssertGreaterThan(leaf.notAfter, Date())
        let ipLeaf = try XCTUnwrap(CertificateFacts(try minter.mint(host: "::1").certificateChain[0]))
        XCTAssertEqual(ipLeaf.names, ["::1"])
        let v4Leaf = try XCTUnwrap(CertificateFacts(try minter.mint(host: "192.0.2.7").certificateChain[0]))
        XCTAssertEqual(v4Leaf.names, ["192.0.2.7"])
        let root = try XCTUnwrap(CertificateFacts(try NIOSSLCertificate(bytes: authority.certificateDER, format: .der)))
        XCTAssertTrue(root.isSelfIssued)
        XCTAssertTrue(root.isCertificateAuthority)
    }

    /// Received alerts by name, and no alert where there is none.
    func testReceivedAlertNames() {
        XCTAssertEqual(TLSErrorReasons.receivedAlert(in: ["TLSV1_ALERT_PROTOCOL_VERSION"]), "protocol_version")
        XCTAssertEqual(TLSErrorReasons.receivedAlert(in: ["SSLV3_ALERT_HANDSHAKE_FAILURE"]), "handshake_failure")
        XCTAssertNil(TLSErrorReasons.receivedAlert(in: ["CERTIFICATE_VERIFY_FAILED"]))
        XCTAssertEqual(TLSErrorReasons.names(in: NIOSSLError.uncleanShutdown), [])
    }
}
