import ProxyCore
import XCTest

/// The JA4-style fingerprint that, with the address, names a client for auto-pinning: what it
/// reads, what it ignores (order, GREASE, SNI, per-connection extensions), and that any hello
/// the parser accepts gets one.
final class ClientHelloFingerprintTests: XCTestCase {
    private typealias Builder = ClientHelloBuilder

    private static let signatureAlgorithms: (type: UInt16, data: [UInt8]) =
        (13, Builder.lengthPrefixed16([0x04, 0x03, 0x08, 0x04]))
    private static let padding: (type: UInt16, data: [UInt8]) = (21, [UInt8](repeating: 0, count: 100))

    private func fingerprint(_ builder: Builder, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard case .clientHello(let hello) = TLSClientHelloParser.parse(builder.records()) else {
            XCTFail("the builder's hello does not parse", file: file, line: line)
            return ""
        }
        return ClientHelloFingerprint.of(hello)
    }

    /// Two TLS 1.3 suites, SNI, ALPN h2, supported_versions and signature_algorithms.
    private func basicHello() -> Builder {
        var builder = Builder()
        builder.cipherSuites = [0x13, 0x01, 0x13, 0x02]
        builder.extensions = [Builder.serverNameExtension("a.test"), Builder.alpnExtension(["h2"]),
                              Builder.supportedVersionsExtension([0x0304, 0x0303]), Self.signatureAlgorithms]
        return builder
    }

    /// The value JA4's recipe gives, computed independently (Python's hashlib):
    /// sha256("1301,1302") and sha256("000d,002b_0403,0804"), 12 hex digits each. SNI is not
    /// counted (3 extensions: ALPN, versions, signatures).
    func testKnownValue() {
        XCTAssertEqual(fingerprint(basicHello()), "t130203h2_62ed6f6ca7ad_ef5f37ab036a")
    }

    /// Chrome shuffles its extensions: the order of extensions and suites does not matter; the
    /// order of signature algorithms does (JA4 keeps it).
    func testOrderDoesNotMatterExceptForSignatureAlgorithms() {
        var shuffled = basicHello()
        shuffled.cipherSuites = [0x13, 0x02, 0x13, 0x01]
        shuffled.extensions = shuffled.extensions.map { Array($0.reversed()) }
        XCTAssertEqual(fingerprint(shuffled), fingerprint(basicHello()))
        var reordered = basicHello()
        reordered.extensions![3] = (13, Builder.lengthPrefixed16([0x08, 0x04, 0x04, 0x03]))
        XCTAssertNotEqual(fingerprint(reordered), fingerprint(basicHello()))
    }

    /// GREASE values (RFC 8701) in suites, extensions, versions and signatures are ignored.
    func testGREASEIsIgnored() {
        var greased = basicHello()
        greased.cipherSuites = [0x7A, 0x7A] + greased.cipherSuites
        greased.extensions = [(0x1A1A, [])] + greased.extensions! + [(0xFAFA, [0])]
        greased.extensions![3] = Builder.supportedVersionsExtension([0x3A3A, 0x0304, 0x0303])
        greased.extensions!.append((13, Builder.lengthPrefixed16([0x0A, 0x0A, 0x04, 0x03, 0x08, 0x04])))
        greased.extensions!.remove(at: 4)  // the original signature_algorithms (now replaced)
        XCTAssertEqual(fingerprint(greased), fingerprint(basicHello()))
        XCTAssertTrue((0..<16).allSatisfy { ClientHelloFingerprint.isGREASE(UInt16($0) << 12 | 0x0A00 | UInt16($0) << 4 | 0x0A) })
        XCTAssertFalse(ClientHelloFingerprint.isGREASE(0x1A2A))
        XCTAssertFalse(ClientHelloFingerprint.isGREASE(0x1301))
    }

    /// One client is one client wherever it goes: with or without SNI (an IP target), with
    /// padding, a resumption's pre_shared_key or early_data.
    func testPerConnectionExtensionsAreIgnored() {
        var noSNI = basicHello()
        noSNI.extensions!.removeFirst()
        XCTAssertEqual(fingerprint(noSNI), fingerprint(basicHello()))
        var resuming = basicHello()
        resuming.extensions! += [Self.padding, (42, []), (41, [0, 0])]
        XCTAssertEqual(fingerprint(resuming), fingerprint(basicHello()))
    }

    /// What tells clients apart does: ALPN, versions, suites, other extensions.
    func testDifferentClientsDiffer() {
        var http1 = basicHello()
        http1.extensions![1] = Builder.alpnExtension(["http/1.1"])
        XCTAssertEqual(fingerprint(http1).prefix(10), "t130203h1_")
        var tls12 = basicHello()
        tls12.extensions![2] = Builder.supportedVersionsExtension([0x0303])
        XCTAssertEqual(fingerprint(tls12).prefix(4), "t120")
        var moreSuites = basicHello()
        moreSuites.cipherSuites += [0x13, 0x03]
        XCTAssertEqual(fingerprint(moreSuites).prefix(7), "t130303")
        var moreExtensions = basicHello()
        moreExtensions.extensions!.append((23, []))
        XCTAssertNotEqual(fingerprint(moreExtensions), fingerprint(basicHello()))
        let all = [basicHello(), http1, tls12, moreSuites, moreExtensions].map { fingerprint($0) }
        XCTAssertEqual(Set(all).count, all.count)
    }

    /// Odd but accepted hellos: no extensions at all, an ALPN name with bytes that are no
    /// letters, a one-byte ALPN name, 30,000 suites (counts stop at 99), malformed
    /// signature_algorithms (read as none), an unknown legacy version. (A hostile or truncated
    /// hello never reaches the fingerprint: the parser refuses it, see `TLSClientHelloFuzzTests`,
    /// which also fingerprints every mutated hello it accepts.)
    func testOddHellos() {
        var bare = Builder()
        bare.extensions = nil
        XCTAssertEqual(fingerprint(bare), "t120200" + "00_62ed6f6ca7ad_000000000000")
        var binaryALPN = basicHello()
        binaryALPN.extensions![1] = (16, Builder.lengthPrefixed16(Builder.lengthPrefixed8([0x2F, 0x01, 0x7E])))
        XCTAssertEqual(fingerprint(binaryALPN).prefix(10), "t1302032e_", "JA4: hex of the first and last bytes")
        var oneByteALPN = basicHello()
        oneByteALPN.extensions![1] = Builder.alpnExtension(["x"])
        XCTAssertEqual(fingerprint(oneByteALPN).prefix(10), "t130203xx_")
        var manySuites = basicHello()
        manySuites.cipherSuites = (0..<30_000).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        XCTAssertEqual(fingerprint(manySuites).prefix(10), "t139903h2_")
        var oddSignatures = basicHello()
        oddSignatures.extensions![3] = (13, [0, 3, 4, 3, 8])
        XCTAssertTrue(Self.isWellFormed(fingerprint(oddSignatures)))
        var ancient = basicHello()
        ancient.legacyVersion = 0x0200
        ancient.extensions!.remove(at: 2)
        XCTAssertEqual(fingerprint(ancient).prefix(3), "t00")
    }

    /// The captured curl and openssl hellos: well-formed, and the one split over two records
    /// reads like the others.
    func testCapturedHellos() {
        for (name, bytes) in CapturedClientHellos.all {
            guard case .clientHello(let hello) = TLSClientHelloParser.parse(bytes) else { return XCTFail(name) }
            XCTAssertFalse(hello.cipherSuites.isEmpty, name)
            XCTAssertFalse(hello.extensionTypes.isEmpty, name)
            XCTAssertTrue(Self.isWellFormed(ClientHelloFingerprint.of(hello)), "\(name): \(ClientHelloFingerprint.of(hello))")
        }
    }

    /// `t` + 2 version characters + 4 digits + 2 ALPN characters, then two groups of 12 hex digits.
    static func isWellFormed(_ fingerprint: String) -> Bool {
        let parts = fingerprint.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 9, parts[0].first == "t" else { return false }
        let counts = parts[0].dropFirst(3).prefix(4)
        let isHex = { (part: Substring) in part.count == 12 && part.allSatisfy { $0.isHexDigit && !$0.isUppercase } }
        return counts.allSatisfy(\.isASCII) && counts.allSatisfy(\.isNumber) && isHex(parts[1]) && isHex(parts[2])
    }
}
