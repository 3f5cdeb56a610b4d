import NIOCore
import XCTest
@testable import proxyapp

/// A listening socket that cannot be opened is said in words with the fix, never as NIO's error
/// description ("bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)").
final class ListenFailureTests: XCTestCase {
    func testBusyPortIsSaidInWords() {
        let message = ListenFailure.message(listen: "127.0.0.1:19201",
                                            error: IOError(errnoCode: EADDRINUSE, reason: "bind(descriptor:ptr:bytes:)"))
        XCTAssertEqual(message, "127.0.0.1:19201 is already in use: stop the other process or choose another --listen.")
    }

    func testOtherFailuresNameTheReasonAndTheFlag() {
        let cases: [(any Error, String)] = [
            (IOError(errnoCode: EACCES, reason: "bind(descriptor:ptr:bytes:)"), "cannot listen on h:80: permission denied (ports below 1024 need root)"),
            (IOError(errnoCode: EADDRNOTAVAIL, reason: "bind(descriptor:ptr:bytes:)"), "cannot listen on h:80: the address does not belong to this machine"),
            (SocketAddressError.failedToParseIPString("1.2.3"), "cannot listen on h:80: '1.2.3' is not an IP address"),
            (IOError(errnoCode: EIO, reason: "bind(descriptor:ptr:bytes:)"), "cannot listen on h:80: input/output error (errno \(EIO))"),
        ]
        for (error, expected) in cases {
            let message = ListenFailure.message(listen: "h:80", error: error)
            XCTAssertTrue(message.hasPrefix(expected), message)
            XCTAssertTrue(message.contains("--listen"), message)
            XCTAssertFalse(message.contains("descriptor:"), message)
        }
    }
}
