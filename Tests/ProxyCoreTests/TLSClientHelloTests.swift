import ProxyCore
import XCTest

/// Reading SNI, ALPN and versions from the first bytes of a tunnel: real hellos from curl and
/// openssl, every prefix of them, record splits, and the structures that must be refused.
final class TLSClientHelloTests: XCTestCase {
    private typealias Builder = ClientHelloBuilder

    private func parse(_ bytes: [UInt8]) -> TLSClientHelloParser.Result {
        TLSClientHelloParser.parse(bytes)
    }

    private func hello(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> TLSClientHello? {
        guard case .clientHello(let hello) = parse(bytes) else {
            XCTFail("expected a ClientHello, got \(parse(bytes))", file: file, line: line)
            return nil
        }
        // The fields that route a tunnel; the fingerprint's fields have tests of their own
        // (`ClientHelloFingerprintTests`).
        return TLSClientHello(serverName: hello.serverName, alpnProtocols: hello.alpnProtocols,
                              legacyVersion: hello.legacyVersion, supportedVersions: hello.supportedVersions)
    }

    private func serverName(sent name: [UInt8]) -> String? {
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension(name)]
        return hello(builder.records())?.serverName
    }

    /// Each captured hello gives the name and protocols its client was asked for.
    func testCapturedHellos() {
        let tls13AndBelow: [UInt16] = [0x0304, 0x0303, 0x0302, 0x0301]
        XCTAssertEqual(hello(CapturedClientHellos.curlWithSNI), TLSClientHello(
            serverName: "name.test", alpnProtocols: ["http/1.1"], legacyVersion: 0x0303, supportedVersions: tls13AndBelow))
        XCTAssertEqual(hello(CapturedClientHellos.curlToIPAddress), TLSClientHello(
            serverName: nil, alpnProtocols: ["h2", "http/1.1"], legacyVersion: 0x0303, supportedVersions: tls13AndBelow))
        XCTAssertEqual(hello(CapturedClientHellos.curlTLS12Only), TLSClientHello(
            serverName: "legacy.name.test", alpnProtocols: ["http/1.1"], legacyVersion: 0x0303, supportedVersions: []))
        XCTAssertEqual(hello(CapturedClientHellos.opensslWithALPN), TLSClientHello(
            serverName: "x.test", alpnProtocols: ["h2", "http/1.1"], legacyVersion: 0x0303, supportedVersions: tls13AndBelow))
        XCTAssertEqual(hello(CapturedClientHellos.opensslSplitOverTwoRecords), TLSClientHello(
            serverName: CapturedClientHellos.splitHelloServerName, alpnProtocols: ["h2", "http/1.1"],
            legacyVersion: 0x0303, supportedVersions: tls13AndBelow))
        XCTAssertEqual(hello(CapturedClientHellos.opensslWithALPN)?.offersTLS13, true)
        XCTAssertEqual(hello(CapturedClientHellos.curlTLS12Only)?.offersTLS13, false)
    }

    /// The split capture really is two records, the first one ending inside the message.
    func testSplitCaptureSpansTwoRecords() {
        let bytes = CapturedClientHellos.opensslSplitOverTwoRecords
        let firstRecordLength = Int(bytes[3]) << 8 | Int(bytes[4])
        let messageLength = Int(bytes[6]) << 16 | Int(bytes[7]) << 8 | Int(bytes[8])
        XCTAssertLessThan(firstRecordLength, 4 + messageLength)
        XCTAssertEqual(bytes[5 + firstRecordLength], 22)
        XCTAssertEqual(parse(Array(bytes.prefix(5 + firstRecordLength))), .needMoreData)
    }

    /// Every proper prefix of a real hello, including the empty one, asks for more bytes.
    func testEveryPrefixNeedsMoreData() {
        for (name, bytes) in CapturedClientHellos.all {
            for length in 0..<bytes.count where parse(Array(bytes.prefix(length))) != .needMoreData {
                XCTFail("\(name): prefix of \(length) bytes gave \(parse(Array(bytes.prefix(length))))")
                break
            }
        }
    }

    /// Records that follow a complete hello (0-RTT data, a compatibility ChangeCipherSpec) do not matter.
    func testBytesAfterTheHelloAreIgnored() {
        let changeCipherSpec: [UInt8] = [20, 3, 3, 0, 1, 1]
        let earlyData: [UInt8] = [23, 3, 3, 0, 3, 1, 2, 3]
        let expected = hello(CapturedClientHellos.opensslWithALPN)
        XCTAssertEqual(hello(CapturedClientHellos.opensslWithALPN + changeCipherSpec + earlyData), expected)
        XCTAssertEqual(hello(CapturedClientHellos.opensslWithALPN + [0xFF]), expected)
    }

    /// The same message in records of any size, down to one byte each, reads the same.
    func testReassemblyAcrossRecordSizes() {
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension("split.test"), Builder.alpnExtension(["h2"])]
        let expected = TLSClientHello(serverName: "split.test", alpnProtocols: ["h2"], legacyVersion: 0x0303, supportedVersions: [])
        for size in [1, 2, 3, 4, 5, 17, 100, 1 << 14] {
            XCTAssertEqual(hello(builder.records(fragmentSize: size)), expected, "fragment size \(size)")
        }
        XCTAssertEqual(hello(builder.records(recordVersion: 0x0303)), expected)
        XCTAssertEqual(hello(builder.records(recordVersion: 0x0304)), expected)
    }

    /// Anything but a handshake record carrying a ClientHello is refused at once.
    func testRecordLayerRefusals() {
        let valid = CapturedClientHellos.opensslWithALPN
        func with(_ index: Int, _ value: UInt8) -> [UInt8] {
            var bytes = valid
            bytes[index] = value
            return bytes
        }
        XCTAssertEqual(parse(Array("GET / HTTP/1.1\r\n\r\n".utf8)), .notTLS)
        XCTAssertEqual(parse([0x80, 0x2E, 0x01, 0x03, 0x01]), .notTLS, "SSLv2-style hello")
        XCTAssertEqual(parse([23]), .notTLS, "application data")
        XCTAssertEqual(parse(with(0, 21)), .notTLS, "an alert record")
        XCTAssertEqual(parse([22, 2]), .notTLS, "SSL 2 major version")
        XCTAssertEqual(parse(with(1, 2)), .notTLS, "record major version 2")
        XCTAssertEqual(parse(with(2, 5)), .notTLS, "record version past TLS 1.3")
        XCTAssertEqual(parse([22, 3, 1, 0, 0]), .notTLS, "empty handshake record")
        XCTAssertEqual(parse([22, 3, 1, 0x40, 0x01]), .notTLS, "record over 2^14 bytes")
        XCTAssertEqual(parse(with(5, 2)), .notTLS, "a ServerHello")
        XCTAssertEqual(parse([22, 3, 1]), .needMoreData)
    }

    /// A non-handshake record in the middle of a split hello is refused.
    func testInterleavedRecordIsRefused() {
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension("split.test")]
        var bytes = builder.records(fragmentSize: 20)
        bytes.insert(contentsOf: [23, 3, 3, 0, 1, 0], at: 25)
        XCTAssertEqual(parse(bytes), .notTLS)
    }

    /// A hello may be 64 KiB long; a byte more is refused from its header alone.
    func testSizeLimit() {
        let maximum = TLSClientHelloParser.maximumClientHelloLength
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension("big.test"), (21, [])]  // 21: padding
        let fixedLength = builder.body.count
        builder.extensions = [Builder.serverNameExtension("big.test"), (21, Array(repeating: 0, count: maximum - fixedLength))]
        XCTAssertEqual(builder.body.count, maximum)
        XCTAssertEqual(hello(builder.records())?.serverName, "big.test")

        builder.extensions = [Builder.serverNameExtension("big.test"), (21, Array(repeating: 0, count: maximum - fixedLength + 1))]
        let oversized = builder.records()
        XCTAssertEqual(parse(Array(oversized.prefix(9))), .notTLS)
        XCTAssertEqual(parse(oversized), .notTLS)
        XCTAssertEqual(parse([22, 3, 1, 0, 4, 1, 0xFF, 0xFF, 0xFF]), .notTLS)
    }

    /// Structures a TLS server would reject as `decode_error`.
    func testMalformedBodiesAreRefused() {
        func result(_ change: (inout Builder) -> Void) -> TLSClientHelloParser.Result {
            var builder = Builder()
            builder.extensions = [Builder.serverNameExtension("a.test")]
            change(&builder)
            return parse(builder.records())
        }
        XCTAssertEqual(result { $0.sessionID = Array(repeating: 1, count: 33) }, .notTLS)
        XCTAssertEqual(result { $0.cipherSuites = [] }, .notTLS)
        XCTAssertEqual(result { $0.cipherSuites = [0x13, 0x01, 0x13] }, .notTLS)
        XCTAssertEqual(result { $0.compressionMethods = [] }, .notTLS)
        XCTAssertEqual(result { $0.extensions?.append(Builder.serverNameExtension("b.test")) }, .notTLS, "duplicate")
        XCTAssertEqual(result { $0.extensions?.append((16, [0, 0])) }, .notTLS, "empty ALPN list")
        XCTAssertEqual(result { $0.extensions?.append((16, [0, 2, 5, 0x68])) }, .notTLS, "ALPN name overruns its list")
        XCTAssertEqual(result { $0.extensions?.append(Builder.alpnExtension(["h2", ""])) }, .notTLS, "empty ALPN name")
        XCTAssertEqual(result { $0.extensions?.append((43, [3, 3, 4, 3])) }, .notTLS, "odd supported_versions")
        XCTAssertEqual(result { $0.extensions?.append((43, [])) }, .notTLS)
        XCTAssertEqual(result { $0.extensions = [(0, [])] }, .notTLS, "empty server_name extension")
        XCTAssertEqual(result { $0.extensions = [(0, [0, 3, 0, 0, 9])] }, .notTLS, "name overruns its list")

        var trailing = Builder()
        trailing.extensions = [Builder.serverNameExtension("a.test")]
        XCTAssertEqual(parse(Builder.records(of: Builder.handshakeMessage(body: trailing.body + [0]), fragmentSizes: [1 << 14])),
                       .notTLS)
    }

    /// Without any extension (legal before TLS 1.3) the hello is read with nothing in it.
    func testHelloWithoutExtensions() {
        var builder = Builder()
        builder.extensions = nil
        XCTAssertEqual(hello(builder.records()), TLSClientHello(serverName: nil, alpnProtocols: [], legacyVersion: 0x0303, supportedVersions: []))
    }

    /// SNI is kept only when it is an ASCII DNS name; otherwise it is as if none was sent.
    func testServerNameValidation() {
        XCTAssertEqual(serverName(sent: Array("Example.COM".utf8)), "example.com")
        XCTAssertEqual(serverName(sent: Array("xn--bcher-kva.test".utf8)), "xn--bcher-kva.test")
        XCTAssertEqual(serverName(sent: Array("_dmarc.example.test".utf8)), "_dmarc.example.test")
        XCTAssertEqual(serverName(sent: Array("1.2.3.example".utf8)), "1.2.3.example")
        XCTAssertEqual(serverName(sent: Array((String(repeating: "a", count: 63) + ".test").utf8)), String(repeating: "a", count: 63) + ".test")
        let longest = (0..<4).map { _ in String(repeating: "x", count: 62) }.joined(separator: ".") + ".a"
        XCTAssertEqual(longest.utf8.count, 253)
        XCTAssertEqual(serverName(sent: Array(longest.utf8)), longest)

        let refused = [
            "", "127.0.0.1", "bücher.test", "has space.test", "a..b", "trailing.dot.", ".leading",
            "-lead.test", "trail-.test", "under\u{0}nul.test", "[::1]", "host:443",
            String(repeating: "a", count: 64) + ".test", longest + "a",
        ]
        for name in refused {
            XCTAssertNil(serverName(sent: Array(name.utf8)), "'\(name)'")
        }
        XCTAssertNil(serverName(sent: [0xFF, 0x2E, 0x74]))

        var otherType = Builder()
        otherType.extensions = [Builder.serverNameExtension(Array("a.test".utf8), nameType: 1)]
        XCTAssertNil(hello(otherType.records())?.serverName)
    }

    /// The HTTP sniff for a tunnel's first bytes: a method of capitals and a space.
    func testLooksLikeHTTP() {
        func looks(_ text: String) -> Bool? { TLSClientHelloParser.looksLikeHTTP(Array(text.utf8)) }
        XCTAssertEqual(looks("GET / HTTP/1.1\r\n"), true)
        XCTAssertEqual(looks("POST "), true)
        XCTAssertEqual(looks("PRI * HTTP/2.0\r\n"), true)
        XCTAssertEqual(looks(String(repeating: "A", count: 20) + " "), true)
        XCTAssertNil(looks(""))
        XCTAssertNil(looks("GE"))
        XCTAssertNil(looks(String(repeating: "A", count: 20)))
        XCTAssertEqual(looks(String(repeating: "A", count: 21)), false)
        XCTAssertEqual(looks(" GET"), false)
        XCTAssertEqual(looks("get /"), false)
        XCTAssertEqual(looks("M-SEARCH * HTTP/1.1"), false)
        XCTAssertEqual(TLSClientHelloParser.looksLikeHTTP(CapturedClientHellos.curlWithSNI), false)
    }
}
