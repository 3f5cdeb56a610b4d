import NIOCore
import NIOPosix
import ProxyCore
import XCTest
@testable import ProxyEngine

/// Name resolution: literals and RFC 6761 names never become DNS queries.
final class SystemHostResolverTests: XCTestCase {
    private var resolver: SystemHostResolver!
    private var group: MultiThreadedEventLoopGroup!

    override func setUp() {
        resolver = SystemHostResolver(limits: .init(threads: 1))
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    override func tearDown() {
        resolver.shutdown()
        try? group.syncShutdownGracefully()
    }

    func testLiteralsAndLocalhost() throws {
        let loop = group.next()
        XCTAssertEqual(try resolver.resolve(host: "127.0.0.2", port: 81, on: loop).wait().map(\.port), [81])
        XCTAssertEqual(try resolver.resolve(host: "::1", port: 82, on: loop).wait().first?.ipAddress, "::1")
        let local = try resolver.resolve(host: "api.localhost", port: 83, on: loop).wait()
        XCTAssertEqual(local.compactMap(\.ipAddress), ["127.0.0.1", "::1"])
    }

    func testInvalidNamesFailWithAReason() {
        XCTAssertThrowsError(try resolver.resolve(host: "no-such.invalid", port: 80, on: group.next()).wait()) { error in
            guard case .dnsFailure(let host, let reason)? = error as? ProxyFailure else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(host, "no-such.invalid")
            XCTAssertTrue(reason.contains("RFC 6761"))
        }
    }

    /// A host that is not in `HostName.normalized` form never reaches getaddrinfo, which would
    /// read `0x7f.1` as 127.0.0.1 where no rule looked.
    func testUnnormalizedHostsAreRefused() {
        for host in ["0x7f.1", "2130706433", "127.1", "0177.0.0.1", "::ffff:127.0.0.1", "Localhost", "localhost.",
                     "0:0::1"] {
            XCTAssertThrowsError(try resolver.resolve(host: host, port: 80, on: group.next()).wait(), host) { error in
                guard case .dnsFailure(let failedHost, let reason)? = error as? ProxyFailure else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertEqual(failedHost, host)
                XCTAssertEqual(reason, "not resolved: the host is not in canonical form")
            }
        }
    }

    /// `getaddrinfo` finds a name the system knows (`/etc/hosts`) with the port asked for.
    func testSystemLookUp() throws {
        let looked = try SystemHostResolver.lookUp(host: "localhost", port: 85)
        XCTAssertTrue(looked.contains { $0.ipAddress == "127.0.0.1" && $0.port == 85 }, "\(looked)")
    }
}
