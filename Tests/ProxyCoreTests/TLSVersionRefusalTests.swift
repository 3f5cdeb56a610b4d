import ProxyCore
import XCTest

/// The TLS version vocabulary (`--client-tls-min 1.0` … `1.3`) and the refusal decisions: which
/// version a ClientHello offers at most, and what the flow's note says when it is too old.
final class TLSVersionRefusalTests: XCTestCase {
    private typealias Builder = ClientHelloBuilder

    private func hello(legacy: UInt16, supported: [UInt16]? = nil) -> TLSClientHello {
        TLSClientHello(serverName: "example.com", alpnProtocols: [], legacyVersion: legacy, supportedVersions: supported ?? [])
    }

    /// The four spellings users type are read; anything else (other spellings, spaces, SSL 3)
    /// is refused, so the CLI can list the valid values.
    func testArgumentSpellings() {
        XCTAssertEqual(TLSProtocolVersion.allCases.map(\.argument), ["1.0", "1.1", "1.2", "1.3"])
        for version in TLSProtocolVersion.allCases {
            XCTAssertEqual(TLSProtocolVersion(argument: version.argument), version)
        }
        for odd in ["", "1", "1.", "1.20", " 1.2", "1.2 ", "TLSv1.2", "tls1.2", "3.0", "1.4", "1,2", "１.２", "1.2\0"] {
            XCTAssertNil(TLSProtocolVersion(argument: odd), odd)
        }
        XCTAssertEqual(TLSProtocolVersion.defaultMinimum, .tls12)
        XCTAssertTrue(TLSProtocolVersion.tls11.isLegacy)
        XCTAssertFalse(TLSProtocolVersion.tls12.isLegacy)
        XCTAssertLessThan(TLSProtocolVersion.tls10, .tls13)
    }

    func testWireValueNames() {
        XCTAssertEqual(TLSProtocolVersion.name(ofWireValue: 0x0301), "TLS 1.0")
        XCTAssertEqual(TLSProtocolVersion.name(ofWireValue: 0x0304), "TLS 1.3")
        XCTAssertEqual(TLSProtocolVersion.name(ofWireValue: 0x0300), "SSL 3.0")
        XCTAssertEqual(TLSProtocolVersion.name(ofWireValue: 0x0002), "version 0x0002")
        XCTAssertEqual(TLSProtocolVersion.name(ofWireValue: 0xFAFA), "version 0xfafa")
    }

    /// `supported_versions` decides when present (GREASE and unknown values skipped); without it,
    /// `legacy_version` does.
    func testHighestOfferedVersion() {
        XCTAssertEqual(TLSVersionRefusal.highestOfferedVersion(hello(legacy: 0x0301)), 0x0301)
        XCTAssertEqual(TLSVersionRefusal.highestOfferedVersion(hello(legacy: 0x0303, supported: [0x0304, 0x0303])), 0x0304)
        XCTAssertEqual(TLSVersionRefusal.highestOfferedVersion(hello(legacy: 0x0303, supported: [0x3A3A, 0x0302, 0x0301])), 0x0302)
        XCTAssertEqual(TLSVersionRefusal.highestOfferedVersion(hello(legacy: 0x0303, supported: [0xFAFA])), 0x0303)
        // A value above TLS 1.3 that is not GREASE is unknown: ignored, not taken as "newest".
        XCTAssertEqual(TLSVersionRefusal.highestOfferedVersion(hello(legacy: 0x0303, supported: [0x7F1C, 0x0303])), 0x0303)
    }

    /// A TLS 1.0 or 1.1 client under the default minimum gets a note naming its version and the
    /// flag; clients at or above the minimum get none.
    func testClientNote() {
        XCTAssertEqual(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0301), minimum: .tls12),
                       "client offered only TLS 1.0; use --client-tls-min 1.0 to allow it")
        XCTAssertEqual(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0302), minimum: .tls12),
                       "client offered only TLS 1.1; use --client-tls-min 1.1 to allow it")
        XCTAssertEqual(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0303), minimum: .tls13),
                       "client offered only TLS 1.2; use --client-tls-min 1.2 to allow it")
        XCTAssertNil(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0301), minimum: .tls10))
        XCTAssertNil(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0303), minimum: .tls12))
        XCTAssertNil(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0303, supported: [0x0304, 0x0303]), minimum: .tls13))
        XCTAssertEqual(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0300), minimum: .tls10),
                       "client offered only SSL 3.0, which ProxyApp never accepts")
        // A hello from a future version without a fallback is left to the TLS library.
        XCTAssertNil(TLSVersionRefusal.clientNote(for: hello(legacy: 0x0305), minimum: .tls12))
    }

    /// The same decisions on hellos parsed from bytes: a TLS 1.0-only ClientHello (record and
    /// legacy version 0x0301, no supported_versions) and a TLS 1.3 one.
    func testParsedHellos() throws {
        var old = Builder()
        old.legacyVersion = 0x0301
        old.extensions = [Builder.serverNameExtension("old.test")]
        guard case .clientHello(let oldHello) = TLSClientHelloParser.parse(old.records()) else {
            return XCTFail("the TLS 1.0 hello did not parse")
        }
        XCTAssertNotNil(TLSVersionRefusal.clientNote(for: oldHello, minimum: .tls12))
        guard case .clientHello(let modern) = TLSClientHelloParser.parse(CapturedClientHellos.curlWithSNI) else {
            return XCTFail("the curl hello did not parse")
        }
        XCTAssertNil(TLSVersionRefusal.clientNote(for: modern, minimum: .tls13))
    }

    func testUpstreamReasons() {
        XCTAssertEqual(TLSVersionRefusal.upstreamReason(originVersion: .tls10),
                       "origin offers only TLS 1.0; use --upstream-tls-min 1.0 to allow it")
        XCTAssertTrue(TLSVersionRefusal.upstreamLegacyCiphersReason.contains("--upstream-tls-min 1.1"))
    }
}
