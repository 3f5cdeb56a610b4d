import ProxyCore
import XCTest

/// RFC 1928 §7's UDP header: each address type, the payload's offset, fragments told apart,
/// and every cut-short or odd header refused in words.
final class SOCKSDatagramTests: XCTestCase {
    func testAddressTypes() {
        XCTAssertEqual(SOCKSDatagram.parse([0, 0, 0, 0x01, 10, 0, 0, 7, 0, 53] + Array("q".utf8)),
                       .datagram(destination: .address(IPAddressBytes("10.0.0.7")!), port: 53, payloadOffset: 10))
        let v6 = [UInt8](repeating: 0, count: 15) + [1]
        XCTAssertEqual(SOCKSDatagram.parse([0, 0, 0, 0x04] + v6 + [0x01, 0xBB]),
                       .datagram(destination: .address(IPAddressBytes("::1")!), port: 443, payloadOffset: 22))
        XCTAssertEqual(SOCKSDatagram.parse([0, 0, 0, 0x03, 3] + Array("a.b".utf8) + [0, 123, 9, 9]),
                       .datagram(destination: .domain("a.b"), port: 123, payloadOffset: 10))
    }

    func testFragmentsAndBadHeaders() {
        XCTAssertEqual(SOCKSDatagram.parse([0, 0, 1, 0x01, 10, 0, 0, 7, 0, 53]), .fragment)
        let bad: [[UInt8]] = [
            [], [0, 0, 0], [1, 0, 0, 0x01, 10, 0, 0, 7, 0, 53], [0, 0, 0, 0x01, 10, 0, 0, 7, 0],
            [0, 0, 0, 0x04, 1, 2], [0, 0, 0, 0x03], [0, 0, 0, 0x03, 0, 0, 53], [0, 0, 0, 0x03, 5, 0x61],
            [0, 0, 0, 0x03, 1, 0xFF, 0, 53], [0, 0, 0, 0x02, 1, 2, 3, 4, 0, 53], [0, 0, 0, 0x01, 10, 0, 0, 7, 0, 0],
        ]
        for bytes in bad {
            guard case .invalid(let reason) = SOCKSDatagram.parse(bytes) else { return XCTFail("\(bytes) accepted") }
            XCTAssertFalse(reason.isEmpty)
        }
    }

    func testHeaderForAnswers() {
        XCTAssertEqual(SOCKSDatagram.header(from: IPAddressBytes("192.0.2.1")!, port: 53), [0, 0, 0, 0x01, 192, 0, 2, 1, 0, 53])
        XCTAssertEqual(SOCKSDatagram.header(from: IPAddressBytes("::1")!, port: 0x1234),
                       [0, 0, 0, 0x04] + [UInt8](repeating: 0, count: 15) + [1, 0x12, 0x34])
        // Round trip: what the proxy writes, a client's parser reads.
        let header = SOCKSDatagram.header(from: IPAddressBytes("203.0.113.9")!, port: 5353)
        XCTAssertEqual(SOCKSDatagram.parse(header + [7]),
                       .datagram(destination: .address(IPAddressBytes("203.0.113.9")!), port: 5353, payloadOffset: 10))
    }
}
