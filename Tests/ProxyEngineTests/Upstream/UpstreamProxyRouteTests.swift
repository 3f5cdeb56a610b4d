import NIOCore
import NIOEmbedded
import ProxyCore
import XCTest
@testable import ProxyEngine

/// What is asked of an upstream proxy before anything is dialled: a name for `http://` and
/// `socks5h://`, an address ProxyApp resolved for `socks5://`, a dns rule's address over
/// either, no tunnel for plain HTTP through an HTTP proxy — and a client from another machine
/// still kept from this machine's own services wherever ProxyApp can see the address.
final class UpstreamProxyRouteTests: XCTestCase {
    /// Answers from a table; a name not in it fails as DNS does.
    private struct TableResolver: HostResolver {
        var table: [String: [String]]
        func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
            guard let texts = table[host] else {
                return eventLoop.makeFailedFuture(ProxyFailure.dnsFailure(host: host, reason: "no such name"))
            }
            return eventLoop.makeCompletedFuture { try texts.map { try SocketAddress(ipAddress: $0, port: port) } }
        }
    }

    private let loop = EmbeddedEventLoop()
    private var guarded: ClientAccessPolicy {
        var policy = ClientAccessPolicy()
        policy.ownAddresses = [IPAddressBytes("192.0.2.2")!]
        return policy
    }

    private func plan(_ proxy: String, host: String, addresses: [String]? = nil, tunnels: Bool = true,
                      guarded: Bool = false) throws -> UpstreamProxyRoute.Planned {
        let connector = UpstreamConnector(
            resolver: TableResolver(table: ["proxy.lan": ["10.0.0.9"], "example.com": ["203.0.113.5"],
                                            "sneaky.example": ["127.0.0.1"], "mine.example": ["192.0.2.2"]]),
            configuration: ProxyConfiguration())
        return try UpstreamProxyRoute.plan(proxy: try UpstreamProxy.parse(proxy).get(), host: host, port: 443,
                                           addresses: addresses, tunnels: tunnels, guardPolicy: guarded ? self.guarded : nil,
                                           connector: connector, on: loop).wait()
    }

    func testWhatTheProxyIsAskedFor() throws {
        let http = try plan("http://proxy.lan:3128", host: "Example.COM")
        XCTAssertEqual(http.proxyAddresses.map(\.ipAddress), ["10.0.0.9"])
        XCTAssertEqual(http.handshake?.host, "example.com")
        XCTAssertEqual(try plan("socks5h://proxy.lan:1080", host: "example.com").handshake?.host, "example.com")
        XCTAssertEqual(try plan("socks5://proxy.lan:1080", host: "example.com").handshake?.host, "203.0.113.5")
        XCTAssertEqual(try plan("socks5h://proxy.lan:1080", host: "example.com", addresses: ["198.51.100.1"]).handshake?.host,
                       "198.51.100.1", "a dns rule's address is asked for")
        XCTAssertNil(try plan("http://proxy.lan:3128", host: "example.com", tunnels: false).handshake,
                     "plain HTTP goes in absolute form: no CONNECT")
        XCTAssertNotNil(try plan("socks5h://proxy.lan:1080", host: "example.com", tunnels: false).handshake,
                        "SOCKS always opens a tunnel")
    }

    func testGuardedClientsStayOffThisMachine() throws {
        for (proxy, host) in [("http://proxy.lan:3128", "127.0.0.1"), ("socks5h://proxy.lan:1080", "localhost"),
                              ("http://proxy.lan:3128", "[::1]"), ("socks5h://proxy.lan:1080", "192.0.2.2"),
                              ("socks5://proxy.lan:1080", "sneaky.example"), ("socks5://proxy.lan:1080", "mine.example"),
                              ("http://proxy.lan:3128", "api.localhost")] {
            XCTAssertThrowsError(try plan(proxy, host: host, guarded: true), "\(proxy) \(host)") { error in
                guard case .internalDestination? = error as? ProxyFailure else {
                    return XCTFail("\(proxy) \(host): \(error)")
                }
            }
            XCTAssertNoThrow(try plan(proxy, host: host, guarded: false), "\(proxy) \(host) unguarded")
        }
        // A name the proxy resolves is looked up on its machine, not this one.
        XCTAssertEqual(try plan("socks5h://proxy.lan:1080", host: "sneaky.example", guarded: true).handshake?.host,
                       "sneaky.example")
    }

    func testAnUnresolvableProxyIsNamed() throws {
        XCTAssertThrowsError(try plan("http://nowhere.lan:3128", host: "example.com")) { error in
            XCTAssertEqual((error as? ProxyFailure)?.message,
                           "upstream proxy http://nowhere.lan:3128: cannot resolve host 'nowhere.lan': no such name")
        }
    }
}
