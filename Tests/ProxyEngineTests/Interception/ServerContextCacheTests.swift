import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import ProxyCore
@testable import ProxyEngine
import ProxyTLS
import XCTest

/// The server contexts intercepted handshakes share: one per leaf, minimum version and ALPN
/// list; a leaf minted again, other protocols or another minimum get their own; a context is
/// replaced after its handshakes; the least recently used goes first; a failed build is never kept.
final class ServerContextCacheTests: XCTestCase {
    private static let minter: LeafCertificateMinter = {
        do { return try LeafCertificateMinter(authority: try CertificateAuthority.generate(commonName: "Context Cache CA")) } catch {
            fatalError("cannot make the test CA: \(error)")
        }
    }()

    private func identity(_ host: String = "example.test") throws -> ServerIdentity {
        let leaf = try Self.minter.mint(host: host, now: Date())
        return ServerIdentity(certificateChain: leaf.certificateChain, privateKey: leaf.privateKey)
    }

    /// A cache whose builder counts its calls (and fails while `failing` is set).
    private final class CountingCache: Sendable {
        let builds = NIOLockedValueBox(0)
        let failing = NIOLockedValueBox(false)
        let cache: ServerContextCache

        init(capacity: Int = 8, handshakesPerContext: Int = 100) {
            let builds = self.builds, failing = self.failing
            cache = ServerContextCache(capacity: capacity, handshakesPerContext: handshakesPerContext) { identity, minimum, protocols in
                struct BuildFailed: Error {}
                if failing.withLockedValue({ $0 }) { throw BuildFailed() }
                builds.withLockedValue { $0 += 1 }
                return try TLSInterception.serverContext(for: identity, minimumVersion: minimum, protocols: protocols)
            }
        }

        func context(_ identity: ServerIdentity, _ protocols: [String] = ["http/1.1"],
                     minimum: TLSProtocolVersion = .tls12) throws -> NIOSSLContext {
            try cache.context(for: identity, minimumVersion: minimum, protocols: protocols)
        }

        var buildCount: Int { builds.withLockedValue { $0 } }
    }

    func testConnectionsPresentingOneLeafShareOneContext() throws {
        let counting = CountingCache()
        let leaf = try identity()
        let first = try counting.context(leaf)
        for _ in 0..<10 {
            XCTAssertTrue(try counting.context(leaf) === first)
        }
        // The same leaf as the leaf cache hands it out again: a new ServerIdentity, the same objects.
        let again = ServerIdentity(certificateChain: leaf.certificateChain, privateKey: leaf.privateKey)
        XCTAssertTrue(try counting.context(again) === first)
        XCTAssertEqual(counting.buildCount, 1)
    }

    func testProtocolsAndMinimumVersionGetContextsOfTheirOwn() throws {
        let counting = CountingCache()
        let leaf = try identity()
        let plain = try counting.context(leaf, ["http/1.1"])
        let h2 = try counting.context(leaf, ["h2", "http/1.1"])
        let h2Second = try counting.context(leaf, ["http/1.1", "h2"])
        let strict = try counting.context(leaf, ["http/1.1"], minimum: .tls13)
        XCTAssertEqual(counting.buildCount, 4)
        XCTAssertEqual(Set([plain, h2, h2Second, strict].map(ObjectIdentifier.init)).count, 4)
        XCTAssertTrue(try counting.context(leaf, ["h2", "http/1.1"]) === h2)
        XCTAssertEqual(counting.buildCount, 4)
    }

    /// A leaf minted again for the same host (renewal, a regenerated CA) is another certificate:
    /// it never gets the old leaf's context.
    func testALeafMintedAgainGetsItsOwnContext() throws {
        let counting = CountingCache()
        let old = try identity("renewed.test"), renewed = try identity("renewed.test")
        let oldContext = try counting.context(old)
        let renewedContext = try counting.context(renewed)
        XCTAssertFalse(oldContext === renewedContext)
        XCTAssertEqual(counting.buildCount, 2)
        // The same certificate with another key is not the same identity either (this minter
        // gives every leaf one key: the other key comes from another CA's minter).
        let otherKey = try LeafCertificateMinter(authority: try CertificateAuthority.generate(commonName: "Other CA"))
            .mint(host: "renewed.test", now: Date()).privateKey
        XCTAssertFalse(otherKey === old.privateKey)
        // Such a pair builds no context (the key does not match the certificate): what counts is
        // that it was not handed the old leaf's.
        let mixed = ServerIdentity(certificateChain: old.certificateChain, privateKey: otherKey)
        XCTAssertThrowsError(try counting.context(mixed))
        XCTAssertEqual(counting.cache.count, 2)
    }

    func testAContextIsReplacedAfterItsHandshakes() throws {
        let counting = CountingCache(handshakesPerContext: 3)
        let leaf = try identity()
        let first = try counting.context(leaf)
        XCTAssertTrue(try counting.context(leaf) === first)
        XCTAssertTrue(try counting.context(leaf) === first)
        let second = try counting.context(leaf)
        XCTAssertFalse(second === first, "the fourth handshake gets a fresh context")
        XCTAssertTrue(try counting.context(leaf) === second)
        XCTAssertEqual(counting.buildCount, 2)
    }

    func testTheLeastRecentlyUsedContextIsForgottenFirst() throws {
        let counting = CountingCache(capacity: 2)
        let a = try identity("a.test"), b = try identity("b.test"), c = try identity("c.test")
        let contextA = try counting.context(a)
        _ = try counting.context(b)
        XCTAssertTrue(try counting.context(a) === contextA)  // a is now the most recent
        _ = try counting.context(c)  // forgets b
        XCTAssertEqual(counting.cache.count, 2)
        XCTAssertTrue(try counting.context(a) === contextA)
        XCTAssertEqual(counting.buildCount, 3)
        _ = try counting.context(b)
        XCTAssertEqual(counting.buildCount, 4, "b was forgotten and is built again")
    }

    func testAFailedBuildIsReportedAndNotKept() throws {
        let counting = CountingCache()
        let leaf = try identity()
        counting.failing.withLockedValue { $0 = true }
        XCTAssertThrowsError(try counting.context(leaf))
        XCTAssertEqual(counting.cache.count, 0)
        counting.failing.withLockedValue { $0 = false }
        _ = try counting.context(leaf)
        XCTAssertEqual(counting.buildCount, 1)
    }

    /// An identity without a certificate has nothing to be known by: it is built each time
    /// (and fails there, as before the cache), never kept under another identity's entry.
    func testAnIdentityWithoutACertificateIsNeverKept() throws {
        let counting = CountingCache()
        let bare = ServerIdentity(certificateChain: [], privateKey: try identity().privateKey)
        _ = try? counting.context(bare)
        _ = try? counting.context(bare)
        XCTAssertEqual(counting.buildCount, 2)
        XCTAssertEqual(counting.cache.count, 0)
    }

    /// Handshakes racing on both event loops (and more threads) for one leaf build it once.
    func testConcurrentHandshakesBuildOneContext() throws {
        let counting = CountingCache(handshakesPerContext: 1_000)
        let leaf = try identity()
        let contexts = NIOLockedValueBox<Set<ObjectIdentifier>>([])
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            guard let context = try? counting.context(leaf) else { return }
            contexts.withLockedValue { _ = $0.insert(ObjectIdentifier(context)) }
        }
        XCTAssertEqual(contexts.withLockedValue { $0.count }, 1)
        XCTAssertEqual(counting.buildCount, 1)
    }
}
