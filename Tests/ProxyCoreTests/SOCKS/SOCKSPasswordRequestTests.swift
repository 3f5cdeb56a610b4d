import ProxyCore
import XCTest

/// RFC 1929 logins: complete at any split point, incomplete until the last byte, refused in
/// words when they are not version 1 or name no user.
final class SOCKSPasswordRequestTests: XCTestCase {
    private static func login(_ user: String, _ password: String) -> [UInt8] {
        [0x01, UInt8(user.utf8.count)] + Array(user.utf8) + [UInt8(password.utf8.count)] + Array(password.utf8)
    }

    func testCompleteOnlyAtTheLastByte() {
        let bytes = Self.login("phone", "pa:ss")
        for cut in 0..<bytes.count {
            XCTAssertEqual(SOCKSPasswordRequest.parse(Array(bytes.prefix(cut))), .incomplete, "cut at \(cut)")
        }
        XCTAssertEqual(SOCKSPasswordRequest.parse(bytes),
                       .complete(user: Array("phone".utf8), password: Array("pa:ss".utf8), consumed: bytes.count))
    }

    func testBytesAfterTheLoginAreNotConsumed() {
        let bytes = Self.login("u", "") + [0x05, 0x01]
        XCTAssertEqual(SOCKSPasswordRequest.parse(bytes), .complete(user: [0x75], password: [], consumed: 4))
    }

    func testLongestLogin() {
        let bytes = Self.login(String(repeating: "u", count: 255), String(repeating: "p", count: 255))
        XCTAssertEqual(bytes.count, SOCKSPasswordRequest.maximumLength)
        guard case .complete(_, _, let consumed) = SOCKSPasswordRequest.parse(bytes) else { return XCTFail("not complete") }
        XCTAssertEqual(consumed, SOCKSPasswordRequest.maximumLength)
    }

    func testRefusals() {
        XCTAssertEqual(SOCKSPasswordRequest.parse([0x05, 0x01, 0x00]),
                       .invalid(reason: "the SOCKS5 login is not RFC 1929 version 1 (got 5)"))
        XCTAssertEqual(SOCKSPasswordRequest.parse([0x01, 0x00, 0x00]),
                       .invalid(reason: "the SOCKS5 login has an empty user name"))
    }

    func testReply() {
        XCTAssertEqual(SOCKSPasswordRequest.reply(success: true), [0x01, 0x00])
        XCTAssertEqual(SOCKSPasswordRequest.reply(success: false), [0x01, 0x01])
    }
}
