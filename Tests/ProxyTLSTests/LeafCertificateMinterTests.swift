import Crypto
import Foundation
import NIOCore
import NIOSSL
import SwiftASN1
import X509
import XCTest
@testable import ProxyTLS

/// Minted leaves: their shape, their validity window, and that verifiers and a real TLS client
/// accept them for exactly the name or address they were minted for.
final class LeafCertificateMinterTests: XCTestCase {
    private static let authority: CertificateAuthority = {
        do { return try CertificateAuthority.generate(commonName: "Minter Test CA") } catch {
            fatalError("cannot make the test CA: \(error)")
        }
    }()

    /// A leaf for a DNS name: CA:false, digitalSignature, serverAuth, SAN = the name, key
    /// identifiers linking it to the root, issued by the root.
    func testLeafForDNSNameHasServerShape() throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let leaf = try Certificate(derEncoded: try minter.mint(host: "example.com").leafDER)
        let extensions = leaf.extensions

        XCTAssertEqual(try extensions.basicConstraints, .notCertificateAuthority)
        XCTAssertEqual(extensions[oid: .X509ExtensionID.basicConstraints]?.critical, true)
        XCTAssertEqual(try extensions.keyUsage, KeyUsage(digitalSignature: true))
        XCTAssertEqual(extensions[oid: .X509ExtensionID.keyUsage]?.critical, true)
        XCTAssertEqual(try extensions.extendedKeyUsage, try ExtendedKeyUsage([.serverAuth]))
        XCTAssertEqual(try extensions.subjectAlternativeNames, SubjectAlternativeNames([.dnsName("example.com")]))
        XCTAssertEqual(extensions[oid: .X509ExtensionID.subjectAlternativeName]?.critical, false)
        XCTAssertEqual(try extensions.subjectKeyIdentifier, SubjectKeyIdentifier(hash: leaf.publicKey))
        XCTAssertEqual(try extensions.authorityKeyIdentifier?.keyIdentifier,
                       try Self.authority.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
        XCTAssertEqual(leaf.subject.description, "CN=example.com")
        XCTAssertEqual(leaf.issuer, Self.authority.certificate.subject)
        XCTAssertEqual(leaf.signatureAlgorithm, .ecdsaWithSHA256)
        XCTAssertLessThanOrEqual(leaf.serialNumber.bytes.count, 20)
    }

    /// Backdated a day, valid for 199 days at most (Chromium refuses 200 and more).
    func testValidityWindow() throws {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let minted = try minter.mint(host: "example.com", now: now)
        let leaf = try Certificate(derEncoded: minted.leafDER)
        XCTAssertEqual(leaf.notValidBefore, now - 86_400)
        XCTAssertEqual(leaf.notValidAfter, now - 86_400 + 199 * 86_400)
        XCTAssertLessThanOrEqual(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore), 199 * 86_400)
        XCTAssertEqual(minted.notAfter, leaf.notValidAfter)
    }

    /// The chain verifies for the name it was minted for, and not for another one.
    func testDNSLeafVerifiesForItsNameOnly() async throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let leaf = try Certificate(derEncoded: try minter.mint(host: "api.example.com").leafDER)
        let root = Self.authority.certificate
        let valid = await ChainVerification.verify(leaf, root: root, hostname: "api.example.com", ipAddress: nil)
        XCTAssertTrue(ChainVerification.isValid(valid), "\(valid)")
        let wrongName = await ChainVerification.verify(leaf, root: root, hostname: "www.example.com", ipAddress: nil)
        XCTAssertFalse(ChainVerification.isValid(wrongName))
        let otherRoot = try CertificateAuthority.generate(commonName: "Minter Test CA").certificate
        let untrusted = await ChainVerification.verify(leaf, root: otherRoot, hostname: "api.example.com", ipAddress: nil)
        XCTAssertFalse(ChainVerification.isValid(untrusted))
    }

    /// IP literals get an iPAddress SAN (4 or 16 bytes) and verify for that address.
    func testIPLeavesVerifyForTheirAddress() async throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let cases: [(host: String, address: String, bytes: [UInt8])] = [
            ("127.0.0.1", "127.0.0.1", [127, 0, 0, 1]),
            ("[::1]", "::1", Array(repeating: 0, count: 15) + [1]),
            ("2001:DB8::5", "2001:db8::5", [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [5]),
        ]
        for (host, address, bytes) in cases {
            let leaf = try Certificate(derEncoded: try minter.mint(host: host).leafDER)
            XCTAssertEqual(try leaf.extensions.subjectAlternativeNames,
                           SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: bytes[...]))]), host)
            XCTAssertEqual(leaf.subject.description, "CN=\(address)")
            let valid = await ChainVerification.verify(leaf, root: Self.authority.certificate, hostname: nil, ipAddress: address)
            XCTAssertTrue(ChainVerification.isValid(valid), "\(host): \(valid)")
            let other = await ChainVerification.verify(leaf, root: Self.authority.certificate, hostname: nil, ipAddress: "10.9.8.7")
            XCTAssertFalse(ChainVerification.isValid(other), host)
        }
    }

    /// The NIOSSL forms: chain is leaf then root, and BoringSSL completes a handshake with them.
    func testMintedLeafCompletesATLSHandshake() throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let minted = try minter.mint(host: "secure.example")
        XCTAssertEqual(minted.certificateChain.count, 2)
        XCTAssertEqual(try minted.certificateChain[0].toDERBytes(), minted.leafDER)
        XCTAssertEqual(try minted.certificateChain[1].toDERBytes(), Self.authority.certificateDER)
        let address = try SocketAddress(ipAddress: "192.0.2.1", port: 443)
        XCTAssertEqual(try InMemoryHandshake.run(presenting: minted, trusting: Self.authority.certificateDER,
                                                 serverHostname: "secure.example", address: address), .completed)
        guard case .failed = try InMemoryHandshake.run(presenting: minted, trusting: Self.authority.certificateDER,
                                                       serverHostname: "other.example", address: address) else {
            return XCTFail("a client expecting another name accepted the leaf")
        }
        let ipLeaf = try minter.mint(host: "192.0.2.1")
        XCTAssertEqual(try InMemoryHandshake.run(presenting: ipLeaf, trusting: Self.authority.certificateDER,
                                                 serverHostname: nil, address: address), .completed)
        let otherAddress = try SocketAddress(ipAddress: "192.0.2.2", port: 443)
        guard case .failed = try InMemoryHandshake.run(presenting: ipLeaf, trusting: Self.authority.certificateDER,
                                                       serverHostname: nil, address: otherAddress) else {
            return XCTFail("a client connected to another address accepted the leaf")
        }
    }

    /// One key per minter, shared by its leaves; another minter has another key. Serials differ.
    func testLeavesShareTheMintersKey() throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let first = try minter.makeCertificate(host: "a.example")
        let second = try minter.makeCertificate(host: "b.example")
        XCTAssertEqual(first.publicKey, second.publicKey)
        XCTAssertNotEqual(first.serialNumber, second.serialNumber)
        let otherMinter = try LeafCertificateMinter(authority: Self.authority)
        XCTAssertNotEqual(try otherMinter.makeCertificate(host: "a.example").publicKey, first.publicKey)
    }

    /// Case, a trailing dot and IPv6 brackets do not change the certificate's name.
    func testHostIsNormalised() throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let leaf = try minter.makeCertificate(host: "WWW.Example.COM.")
        XCTAssertEqual(try leaf.extensions.subjectAlternativeNames, SubjectAlternativeNames([.dnsName("www.example.com")]))
        XCTAssertEqual(leaf.subject.description, "CN=www.example.com")
    }

    func testInvalidHostsAreRefused() throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        for host in ["", ".", "exa mple.com", "bücher.de", "a..b", ".example.com", "[::1", "example.com/path",
                     String(repeating: "a", count: 64) + ".com", "a.*.com",
                     // Names come from clients (SNI, the CONNECT host): a wildcard would cover every
                     // sibling host, so none is ever minted.
                     "*.example.com", "*.com", "*", "*.", "**.example.com", "a*.example.com"] {
            XCTAssertThrowsError(try minter.mint(host: host), host) {
                XCTAssertEqual($0 as? LeafMintingError, .invalidHost(host))
            }
        }
        XCTAssertNoThrow(try minter.mint(host: "under_score.example.com"))
    }

    /// Names over 64 characters fit no common name: the subject is empty and the SAN critical.
    func testLongNameHasCriticalSANInsteadOfCommonName() async throws {
        let minter = try LeafCertificateMinter(authority: Self.authority)
        let host = String(repeating: "a", count: 60) + "." + String(repeating: "b", count: 20) + ".example"
        let leaf = try Certificate(derEncoded: try minter.mint(host: host).leafDER)
        XCTAssertTrue(leaf.subject.isEmpty)
        XCTAssertEqual(leaf.extensions[oid: .X509ExtensionID.subjectAlternativeName]?.critical, true)
        let result = await ChainVerification.verify(leaf, root: Self.authority.certificate, hostname: host, ipAddress: nil)
        XCTAssertTrue(ChainVerification.isValid(result), "\(result)")
    }

    /// A leaf never outlives its root; a root that has expired mints nothing.
    func testLeafValidityEndsWithTheRoot() throws {
        let now = Date()
        let rootEnd = try CertificateAuthority.generate(now: now - CertificateAuthority.generatedValidity + 10 * 86_400)
        let leaf = try LeafCertificateMinter(authority: rootEnd).makeCertificate(host: "example.com", now: now)
        XCTAssertEqual(leaf.notValidAfter, rootEnd.certificate.notValidAfter)

        let past = now - 20 * 365 * 86_400
        let expired = try CertificateAuthority.generate(now: past)
        XCTAssertThrowsError(try LeafCertificateMinter(authority: expired).mint(host: "example.com", now: now)) {
            XCTAssertEqual($0 as? LeafMintingError, .authorityExpired(notAfter: expired.certificate.notValidAfter))
        }
    }

    /// An imported RSA root signs with SHA-256/RSA, and its leaves verify and handshake.
    func testRSAAuthorityMintsVerifyingLeaves() async throws {
        let exported = ForeignAuthorities.rsa
        let authority = try CertificateAuthority(
            certificate: exported.certificate, privateKey: try Certificate.PrivateKey(pemEncoded: exported.privateKeyPEM))
        let minter = try LeafCertificateMinter(authority: authority)
        let minted = try minter.mint(host: "rsa.example")
        let leaf = try Certificate(derEncoded: minted.leafDER)
        XCTAssertEqual(leaf.signatureAlgorithm, .sha256WithRSAEncryption)
        let result = await ChainVerification.verify(leaf, root: authority.certificate, hostname: "rsa.example", ipAddress: nil)
        XCTAssertTrue(ChainVerification.isValid(result), "\(result)")
        let address = try SocketAddress(ipAddress: "192.0.2.1", port: 443)
        XCTAssertEqual(try InMemoryHandshake.run(presenting: minted, trusting: authority.certificateDER,
                                                 serverHostname: "rsa.example", address: address), .completed)
    }
}
