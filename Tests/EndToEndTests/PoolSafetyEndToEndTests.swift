import Foundation
import XCTest

/// Pool safety over real sockets: a connection an origin bound to a login is never shared.
final class PoolSafetyEndToEndTests: XCTestCase {
    /// Client A logs in with NTLM; B's anonymous requests never arrive on A's connection, while
    /// A's later requests do (one event loop, so one shared pool).
    func testLoggedInConnectionIsNeverSharedWithAnotherClient() async throws {
        try await FramingBench.run(threads: 1) { bench in
            let port = bench.plainOrigin.port
            let alice = try await WireClient.connect(proxyPort: bench.proxy.port, group: bench.group)
            let bob = try await WireClient.connect(proxyPort: bench.proxy.port, group: bench.group)
            defer { alice.close(); bob.close() }
            func get(_ client: WireClient, _ path: String, _ extra: String = "") async throws -> String? {
                try await client.send("GET http://127.0.0.1:\(port)\(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(extra)\r\n")
                return try await client.readResponse().header("X-Origin-Connection")
            }
            let login = try await get(alice, "/login", "Authorization: NTLM TlRMTVNTUAADAAAA\r\n")
            for round in 0..<3 {
                let bobs = try await get(bob, "/bob-\(round)")
                XCTAssertNotEqual(bobs, login, "Bob must never get Alice's logged-in connection")
                let alices = try await get(alice, "/alice-\(round)")
                XCTAssertEqual(alices, login, "Alice keeps her connection")
            }
        }
    }
}
