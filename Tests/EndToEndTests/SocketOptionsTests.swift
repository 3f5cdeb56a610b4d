import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The proxy's sockets get `TCP_NODELAY` and nothing else by mistake. NIO's
/// `.socketOption(.tcp_nodelay)` means level `SOL_SOCKET`, where option 1 is `SO_DEBUG`: the
/// proxy set `SO_DEBUG` on every client and origin socket and never `TCP_NODELAY`, and since
/// `SO_DEBUG` needs `CAP_NET_ADMIN`, run by anyone but root it closed every accepted connection
/// at once (curl: "Empty reply from server") and failed every origin connect.
final class SocketOptionsTests: XCTestCase {
    func testClientAndOriginSocketsHaveNoDelayAndNoDebug() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/status/200")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            XCTAssertEqual(try client.readResponse().status, 200)
            let sockets = try OwnSockets.connected()
            let clientSide = try XCTUnwrap(sockets.first { $0.localPort == proxy.port && $0.peerPort == client.localPort },
                                           "the proxy's socket for the client")
            // The origin's own accepted socket has the origin's port as its local port; the
            // proxy's upstream socket has it as its peer.
            let originSide = try XCTUnwrap(sockets.first { $0.peerPort == origin.port },
                                           "the proxy's (pooled) socket to the origin")
            for (name, socket) in [("client", clientSide), ("origin", originSide)] {
                XCTAssertEqual(socket.option(level: SOL_SOCKET, name: SO_DEBUG), 0, "SO_DEBUG on the \(name) socket")
                XCTAssertEqual(socket.option(level: Int32(IPPROTO_TCP), name: TCP_NODELAY).map { $0 != 0 }, true,
                               "TCP_NODELAY on the \(name) socket")
            }
        }
    }
}
