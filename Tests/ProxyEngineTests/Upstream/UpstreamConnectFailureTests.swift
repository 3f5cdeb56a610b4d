import NIOCore
import ProxyCore
import XCTest
@testable import ProxyEngine

/// A failed connect reads in words on the flow: one retried while the proxy stopped read
/// "cannot connect to 127.0.0.1:8080: EventLoopError: the event loop is shutdown".
final class UpstreamConnectFailureTests: XCTestCase {
    func testFailuresInWords() {
        func message(_ error: any Error) -> String {
            UpstreamConnector.failure(for: error, host: "a.test", port: 80, connectTimeout: .seconds(10)).message
        }
        XCTAssertEqual(message(EventLoopError.shutdown), "cannot connect to a.test:80: the proxy is shutting down")
        XCTAssertEqual(message(IOError(errnoCode: EHOSTUNREACH, reason: "connect")), "cannot connect to a.test:80: no route to the server")
        XCTAssertEqual(message(IOError(errnoCode: ECONNRESET, reason: "connect")), "cannot connect to a.test:80: the server reset the connection")
        XCTAssertEqual(message(SocketAddressError.unsupported), "cannot connect to a.test:80: the address family is not supported")
        XCTAssertTrue(message(ChannelError.connectTimeout(.seconds(10))).contains("10"), message(ChannelError.connectTimeout(.seconds(10))))
    }
}
