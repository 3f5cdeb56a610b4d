import Dispatch
import Foundation
import NIOConcurrencyHelpers
import XCTest
@testable import ProxyTLS

/// The leaf cache: one mint per host however many handshakes race for it, misses minted off the
/// caller's thread, hits served on it, least recently used leaves forgotten, expiring ones renewed.
final class LeafCertificateCacheTests: XCTestCase {
    private static let minter: LeafCertificateMinter = {
        do { return try LeafCertificateMinter(authority: try CertificateAuthority.generate(commonName: "Cache Test CA")) } catch {
            fatalError("cannot make the test minter: \(error)")
        }
    }()

    /// 50 concurrent requests for one host while its mint is held open: one mint, 50 completions,
    /// all with the same leaf.
    func testConcurrentRequestsForOneHostMintOnce() throws {
        let mints = MintCounter()
        let release = DispatchSemaphore(value: 0)
        let cache = LeafCertificateCache(capacity: 16, clock: { Date() }) { host, now in
            mints.record(host)
            release.wait()
            return try Self.minter.mint(host: host, now: now)
        }
        let completions = NIOLockedValueBox<[[UInt8]]>([])
        let allDone = expectation(description: "every request completed")
        allDone.expectedFulfillmentCount = 50
        allDone.assertForOverFulfill = true
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            cache.leaf(for: index.isMultiple(of: 2) ? "race.example" : "RACE.example") { result in
                guard case .success(let leaf) = result else { return XCTFail("mint failed: \(result)") }
                completions.withLockedValue { $0.append(leaf.leafDER) }
                allDone.fulfill()
            }
        }
        for _ in 0..<50 { release.signal() }  // enough for every mint a broken cache would start
        wait(for: [allDone], timeout: 60)
        XCTAssertEqual(mints.hosts, ["race.example"])
        let leaves = completions.withLockedValue { $0 }
        XCTAssertEqual(leaves.count, 50)
        XCTAssertEqual(Set(leaves).count, 1)
        XCTAssertEqual(cache.count, 1)
    }

    /// A miss completes on another thread; a hit completes before `leaf(for:)` returns, on the
    /// caller's. (XCTest runs this on the main thread, which stands for an event loop here.)
    func testMissesMintOffTheCallingThreadAndHitsCompleteInline() throws {
        XCTAssertTrue(Thread.isMainThread)
        let cache = LeafCertificateCache(minter: Self.minter)
        let missDone = expectation(description: "miss completed")
        let missOnCaller = NIOLockedValueBox<Bool?>(nil)
        cache.leaf(for: "thread.example") { result in
            if case .failure(let error) = result { XCTFail("mint failed: \(error)") }
            missOnCaller.withLockedValue { $0 = Thread.isMainThread }
            missDone.fulfill()
        }
        wait(for: [missDone], timeout: 60)
        XCTAssertEqual(missOnCaller.withLockedValue { $0 }, false, "the miss was minted on the calling thread")

        let hitOnCaller = NIOLockedValueBox<Bool?>(nil)
        cache.leaf(for: "Thread.Example") { result in
            if case .failure(let error) = result { XCTFail("mint failed: \(error)") }
            hitOnCaller.withLockedValue { $0 = Thread.isMainThread }
        }
        XCTAssertEqual(hitOnCaller.withLockedValue { $0 }, true, "the hit did not complete inline on the caller's thread")
    }

    /// Beyond capacity the least recently used leaf goes; a used one stays.
    func testLeastRecentlyUsedLeafIsEvicted() throws {
        let mints = MintCounter()
        let cache = LeafCertificateCache(capacity: 2, clock: { Date() }) { host, now in
            mints.record(host)
            return try Self.minter.mint(host: host, now: now)
        }
        try leaf(cache, "a.example")
        try leaf(cache, "b.example")
        try leaf(cache, "a.example")  // a is now more recent than b
        try leaf(cache, "c.example")  // evicts b
        XCTAssertEqual(cache.count, 2)
        try leaf(cache, "a.example")
        try leaf(cache, "c.example")
        XCTAssertEqual(mints.hosts, ["a.example", "b.example", "c.example"])
        try leaf(cache, "b.example")
        XCTAssertEqual(mints.hosts, ["a.example", "b.example", "c.example", "b.example"])
        XCTAssertEqual(cache.count, 2)
    }

    /// A leaf within a day of its notAfter is minted again.
    func testLeafNearExpiryIsMintedAgain() throws {
        let mints = MintCounter()
        let clock = NIOLockedValueBox(Date())
        let cache = LeafCertificateCache(capacity: 8, clock: { clock.withLockedValue { $0 } }) { host, now in
            mints.record(host)
            return try Self.minter.mint(host: host, now: now)
        }
        let first = try leaf(cache, "expiring.example")
        clock.withLockedValue { $0 = first.notAfter - 2 * 86_400 }
        XCTAssertEqual(try leaf(cache, "expiring.example").leafDER, first.leafDER)
        clock.withLockedValue { $0 = first.notAfter - 12 * 3600 }
        let renewed = try leaf(cache, "expiring.example")
        XCTAssertNotEqual(renewed.leafDER, first.leafDER)
        XCTAssertGreaterThan(renewed.notAfter, first.notAfter)
        XCTAssertEqual(mints.hosts.count, 2)
    }

    /// A failed mint reaches the caller and is not cached: the next request mints again.
    func testFailedMintIsNotCached() throws {
        struct Refused: Error {}
        let mints = MintCounter()
        let cache = LeafCertificateCache(capacity: 8, clock: { Date() }) { host, now in
            mints.record(host)
            if mints.hosts.count == 1 { throw Refused() }
            return try Self.minter.mint(host: host, now: now)
        }
        XCTAssertThrowsError(try leaf(cache, "flaky.example")) { XCTAssertTrue($0 is Refused) }
        XCTAssertEqual(cache.count, 0)
        XCTAssertNoThrow(try leaf(cache, "flaky.example"))
        XCTAssertEqual(mints.hosts.count, 2)
    }

    /// An invalid host fails at once, without a mint.
    func testInvalidHostFailsWithoutMinting() {
        let mints = MintCounter()
        let cache = LeafCertificateCache(capacity: 8, clock: { Date() }) { host, now in
            mints.record(host)
            return try Self.minter.mint(host: host, now: now)
        }
        let failure = NIOLockedValueBox<(any Error)?>(nil)
        cache.leaf(for: "not a host") { result in
            if case .failure(let error) = result { failure.withLockedValue { $0 = error } }
        }
        XCTAssertEqual(failure.withLockedValue { $0 } as? LeafMintingError, .invalidHost("not a host"))
        XCTAssertEqual(mints.hosts, [])
    }

    /// The leaf for `host`, waiting (bounded) for a mint.
    @discardableResult
    private func leaf(_ cache: LeafCertificateCache, _ host: String) throws -> MintedLeaf {
        let outcome = NIOLockedValueBox<Result<MintedLeaf, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        cache.leaf(for: host) { result in
            outcome.withLockedValue { $0 = result }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "no completion for \(host)")
        return try XCTUnwrap(outcome.withLockedValue { $0 }).get()
    }
}

/// The hosts a test's mint function was called for, in order.
private final class MintCounter: Sendable {
    private let recorded = NIOLockedValueBox<[String]>([])

    func record(_ host: String) {
        recorded.withLockedValue { $0.append(host) }
    }

    var hosts: [String] {
        recorded.withLockedValue { $0 }
    }
}
