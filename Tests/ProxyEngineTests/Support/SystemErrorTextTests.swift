import NIOCore
import XCTest
@testable import ProxyEngine

/// NIO's socket errors become words, never the system call's Swift signature with its
/// unbalanced parenthesis ("read(descriptor:pointer:size:): Connection reset by peer) (errno: 104)").
final class SystemErrorTextTests: XCTestCase {
    func testErrnoInWordsWithThePeer() {
        let reset = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        XCTAssertEqual(SystemErrorText.describe(reset, peer: .client), "the client reset the connection")
        XCTAssertEqual(SystemErrorText.describe(reset, peer: .server), "the server reset the connection")
        XCTAssertEqual(SystemErrorText.describe(reset), "the other side reset the connection")
        XCTAssertEqual(SystemErrorText.words(errno: EPIPE, peer: .client), "the client closed the connection while data was being sent")
        XCTAssertEqual(SystemErrorText.words(errno: ETIMEDOUT, peer: .server), "the connection to the server timed out")
        XCTAssertEqual(SystemErrorText.words(errno: EHOSTUNREACH, peer: .server), "no route to the server")
        XCTAssertEqual(SystemErrorText.words(errno: EMFILE), "too many open files")
        XCTAssertEqual(SystemErrorText.words(errno: EADDRINUSE), "the address is already in use")
    }

    /// Errno values without words of ours read as the C library says them, lower-cased, with
    /// the number; no text of NIO's reaches the result.
    func testOtherErrnoValuesAndErrors() {
        XCTAssertEqual(SystemErrorText.words(errno: EIO), "input/output error (errno \(EIO))")
        for code in [EIO, ENOBUFS, EINVAL, 9999] {
            let text = SystemErrorText.describe(IOError(errnoCode: code, reason: "bind(descriptor:ptr:bytes:)"))
            XCTAssertFalse(text.contains("descriptor:") || text.contains(")) "), text)
            XCTAssertEqual(text.filter { $0 == "(" }.count, text.filter { $0 == ")" }.count, text)
        }
        XCTAssertEqual(SystemErrorText.describe(SocketAddressError.unsupported), "the address family is not supported")
        XCTAssertEqual(SystemErrorText.describe(SocketAddressError.failedToParseIPString("1.2.3")), "'1.2.3' is not an IP address")
    }
}
