import NIOCore
import ProxyCore
import XCTest
@testable import ProxyEngine

/// What a name resolved to, for a client kept from this machine's own services: internal
/// addresses are dropped (a name resolving to both kinds keeps the outside ones), and a name
/// resolving only to internal ones is a 403 naming the first.
final class InternalDestinationFilterTests: XCTestCase {
    private func addresses(_ texts: [String]) throws -> [SocketAddress] {
        try texts.map { try SocketAddress(ipAddress: $0, port: 80) }
    }

    func testUnguardedKeepsEverything() throws {
        let all = try addresses(["127.0.0.1", "10.0.0.1"])
        XCTAssertEqual(try UpstreamConnector.droppingInternal(all, host: "h", policy: nil), all)
    }

    func testMixedKeepsTheOutsideOnes() throws {
        var policy = ClientAccessPolicy()
        policy.ownAddresses = [IPAddressBytes("192.168.1.5")!]
        let kept = try UpstreamConnector.droppingInternal(
            try addresses(["127.0.0.1", "93.184.216.34", "::1", "192.168.1.5", "2001:db8::1", "169.254.169.254"]),
            host: "rebind.example", policy: policy)
        XCTAssertEqual(kept.compactMap(\.ipAddress), ["93.184.216.34", "2001:db8::1"])
    }

    func testOnlyInternalIsRefused() throws {
        let policy = ClientAccessPolicy()
        XCTAssertThrowsError(try UpstreamConnector.droppingInternal(try addresses(["::ffff:127.0.0.1", "127.0.0.2"]),
                                                                    host: "evil.example", policy: policy)) { error in
            XCTAssertEqual(error as? ProxyFailure, .internalDestination(host: "evil.example", address: "127.0.0.1"))
            XCTAssertEqual((error as? ProxyFailure)?.statusCode, 403)
            XCTAssertEqual((error as? ProxyFailure)?.message,
                           "'evil.example' (127.0.0.1) is on the proxy's own machine: clients from other machines may not "
                           + "reach it (run the proxy with --allow-internal to permit it)")
        }
    }
}
