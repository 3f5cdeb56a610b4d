import ProxyCore
import XCTest

/// Which trailer fields pass (RFC 9110 §6.5.1).
final class TrailerFieldsTests: XCTestCase {
    func testFramingRoutingAndAuthNeverPass() {
        for name in ["Content-Length", "TRANSFER-ENCODING", "Host", "Connection", "Authorization", "Set-Cookie",
                     "Cookie", "Proxy-Authorization", "WWW-Authenticate", "Trailer", "Content-Type", "Cache-Control"] {
            XCTAssertFalse(TrailerFields.isForwardable(name), name)
        }
    }

    func testOtherFieldsPass() {
        for name in ["X-Checksum", "grpc-status", "grpc-message", "Server-Timing", "Digest"] {
            XCTAssertTrue(TrailerFields.isForwardable(name), name)
        }
    }
}
