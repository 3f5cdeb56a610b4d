import XCTest
@testable import ProxyCore

/// The incremental ClientHello reader: fed in pieces it answers as `parse` does for the whole
/// input, and its work is linear in the input however small the pieces and records are.
final class TLSClientHelloReaderTests: XCTestCase {
    private typealias Builder = ClientHelloBuilder

    /// A hello whose message is `length` bytes long (padded), named `big.test`.
    private func message(length: Int) -> [UInt8] {
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension("big.test"), (21, [])]
        let padding = length - builder.body.count
        builder.extensions = [Builder.serverNameExtension("big.test"), (21, Array(repeating: 0, count: padding))]
        let message = builder.handshakeMessage
        XCTAssertEqual(message.count, 4 + length)
        return message
    }

    /// Was 0.33 s of CPU per connection: 66 KB of one-byte records, fed one record per read
    /// (as a client trickling them would), re-copied and re-parsed the whole buffer each time.
    /// Now each input byte is examined once and the message body once more.
    func testSixtySixKilobytesOfOneByteRecordsCostLinearWork() {
        let message = message(length: 11_000 - 4)
        let input = Builder.records(of: message, fragmentSizes: [1])
        XCTAssertEqual(input.count, 66_000)
        var reader = TLSClientHelloReader()
        var result = TLSClientHelloParser.Result.needMoreData
        for start in stride(from: 0, to: input.count, by: 6) {
            result = reader.feed(input[start..<(start + 6)])
        }
        guard case .clientHello(let hello) = result else { return XCTFail("got \(result)") }
        XCTAssertEqual(hello.serverName, "big.test")
        XCTAssertLessThanOrEqual(reader.bytesExamined, input.count + message.count,
                                 "each byte once, plus the body parse: linear")
        XCTAssertGreaterThanOrEqual(reader.bytesExamined, input.count, "the counter counts")
    }

    /// The same 66 KB as the start of a 64 KiB hello: still waiting, every byte looked at once.
    func testAPrefixOfAHugeHelloIsReadOnce() {
        let message = message(length: TLSClientHelloParser.maximumClientHelloLength)
        let input = Array(Builder.records(of: message, fragmentSizes: [1]).prefix(66_000))
        var reader = TLSClientHelloReader()
        for start in stride(from: 0, to: input.count, by: 6) {
            XCTAssertEqual(reader.feed(input[start..<(start + 6)]), .needMoreData)
        }
        XCTAssertEqual(reader.bytesExamined, input.count)
    }

    /// Once decided, the answer stands and later bytes are not examined.
    func testADecisionIsFinal() {
        var reader = TLSClientHelloReader()
        XCTAssertEqual(reader.feed([23, 3, 3]), .notTLS)
        let examined = reader.bytesExamined
        XCTAssertEqual(reader.feed(CapturedClientHellos.opensslWithALPN), .notTLS)
        XCTAssertEqual(reader.bytesExamined, examined)
    }

    /// Any split of a real hello, down to single bytes, reads the same as the whole.
    func testEverySplitPointOfACapturedHelloReadsTheSame() {
        for (name, bytes) in CapturedClientHellos.all {
            let whole = TLSClientHelloParser.parse(bytes)
            for cut in stride(from: 0, through: bytes.count, by: 7) {
                var reader = TLSClientHelloReader()
                reader.feed(bytes[..<cut])
                XCTAssertEqual(reader.feed(bytes[cut...]), whole, "\(name) cut at \(cut)")
            }
            var bytewise = TLSClientHelloReader()
            for byte in bytes { bytewise.feed([byte]) }
            XCTAssertEqual(bytewise.result, whole, "\(name) byte by byte")
        }
    }

    /// RFC 5246 Appendix E: the first ClientHello record may carry version 0x0300 (SSL 3.0's
    /// number), and some clients send it; 0x0301 to 0x0304 are accepted as before.
    func testLegalRecordVersionsAreAccepted() {
        var builder = Builder()
        builder.extensions = [Builder.serverNameExtension("old.test")]
        for version: UInt16 in [0x0300, 0x0301, 0x0302, 0x0303, 0x0304] {
            guard case .clientHello(let hello) = TLSClientHelloParser.parse(builder.records(recordVersion: version)) else {
                return XCTFail("record version \(String(version, radix: 16)) refused")
            }
            XCTAssertEqual(hello.serverName, "old.test")
        }
        for version: UInt16 in [0x0305, 0x0200, 0x0400, 0x03FF] {
            XCTAssertEqual(TLSClientHelloParser.parse(builder.records(recordVersion: version)), .notTLS,
                           "record version \(String(version, radix: 16))")
        }
    }
}
