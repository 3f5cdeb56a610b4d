import NIOCore
import XCTest
@testable import proxyapp

/// A port already taken is said in words with the fix, never as NIO's error description
/// ("bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)").
final class ListenFailureTests: XCTestCase {
    func testBusyPortIsSaidInWords() {
        let message = ListenFailure.message(listen: "127.0.0.1:8080",
                                            error: IOError(errnoCode: EADDRINUSE, reason: "bind(descriptor:ptr:bytes:)"))
        XCTAssertEqual(message, "cannot listen on 127.0.0.1:8080: address already in use (errno \(EADDRINUSE)). "
                       + "Pick another address with --listen HOST:PORT.")
    }
}
