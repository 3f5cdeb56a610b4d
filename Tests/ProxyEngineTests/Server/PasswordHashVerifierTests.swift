import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import ProxyCore
import XCTest
@testable import ProxyEngine

/// `--auth-file` logins checked off the loop: real bcrypt (libxcrypt) against hashes htpasswd
/// and Python wrote, verdicts remembered, one check for many asking, and a flood of guesses
/// refused as busy instead of taking the pool.
final class PasswordHashVerifierTests: XCTestCase {
    /// `htpasswd -nbB -C 4 phone 'Pa55:w0rd'`.
    private let phoneHash = "$2y$04$rh9qr9wdgVAlVW2Xc6t7Cu4Udh.KEb.6aer1JfBpeojXGv/2LjScu"

    /// Work that runs only when the test says so, counting how much was asked for.
    private final class HeldWork: BlockingWork, @unchecked Sendable {
        private let held = NIOLockedValueBox<[() -> Void]>([])
        var count: Int { held.withLockedValue { $0.count } }
        func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
            let promise = eventLoop.makePromise(of: T.self)
            held.withLockedValue { $0.append { promise.completeWith(Result { try work() }) } }
            return promise.futureResult
        }
        func releaseAll() {
            while let next = held.withLockedValue({ $0.isEmpty ? nil : $0.removeFirst() }) { next() }
        }
    }

    private func login(_ user: String, _ password: String, hash: String) -> HashedLogin {
        var credentials = ProxyCredentials()
        credentials.add(user: user, bcryptHash: hash)
        guard case .needsHashCheck(let login) = credentials.login(name: Array(user.utf8), password: Array(password.utf8)) else {
            fatalError("no hash check")
        }
        return login
    }

    func testBcryptMatches() {
        XCTAssertTrue(PasswordHashVerifier.matches(password: Array("Pa55:w0rd".utf8), hash: phoneHash))
        XCTAssertFalse(PasswordHashVerifier.matches(password: Array("Pa55:w0rD".utf8), hash: phoneHash))
        XCTAssertFalse(PasswordHashVerifier.matches(password: Array("Pa55:w0rd\0x".utf8), hash: phoneHash))
        XCTAssertFalse(PasswordHashVerifier.matches(password: [], hash: phoneHash))
        // Python's crypt (libxcrypt too), $2b$.
        XCTAssertTrue(PasswordHashVerifier.matches(password: Array("correct horse".utf8),
                                                   hash: "$2b$04$abcdefghijklmnopqrstuujydOTSfIH/d5oUHpsygqV5X9xJLQc6e"))
        XCTAssertFalse(PasswordHashVerifier.matches(password: Array("x".utf8), hash: "not a hash"))
    }

    func testOneCheckForManyAskingThenRemembered() throws {
        let loop = EmbeddedEventLoop()
        let work = HeldWork()
        let verifier = PasswordHashVerifier(blockingWork: work)
        let good = login("phone", "Pa55:w0rd", hash: phoneHash)
        let answers = (0..<5).map { _ in verifier.verify(good, on: loop) }
        XCTAssertEqual(work.count, 1, "the same login is checked once")
        XCTAssertNil(verifier.remembered(good))
        work.releaseAll()
        loop.run()
        XCTAssertEqual(try answers.map { try $0.wait() }, Array(repeating: .accepted, count: 5))
        XCTAssertEqual(verifier.remembered(good), .accepted)
        XCTAssertEqual(try verifier.verify(good, on: loop).wait(), .accepted)
        XCTAssertEqual(work.count, 0, "a remembered login is not checked again")

        let bad = login("phone", "guess", hash: phoneHash)
        let refused = verifier.verify(bad, on: loop)
        work.releaseAll()
        loop.run()
        XCTAssertEqual(try refused.wait(), .rejected)
        XCTAssertEqual(verifier.remembered(bad), .rejected)
    }

    func testFloodOfGuessesIsBoundedAndBusy() throws {
        let loop = EmbeddedEventLoop()
        let work = HeldWork()
        let verifier = PasswordHashVerifier(blockingWork: work, maxRunning: 2, maxWaiting: 3)
        let guesses = (0..<10).map { verifier.verify(login("phone", "guess\($0)", hash: phoneHash), on: loop) }
        XCTAssertEqual(work.count, 2, "two checks run at a time")
        loop.run()
        let busy = guesses.suffix(5).map { try? $0.wait() }
        XCTAssertEqual(busy, Array(repeating: .busy, count: 5), "beyond 2 running and 3 waiting: busy at once")
        // Each finished check starts a waiting one, until all are done.
        for _ in 0..<5 {
            work.releaseAll()
            loop.run()
        }
        XCTAssertEqual(try guesses.prefix(5).map { try $0.wait() }, Array(repeating: .rejected, count: 5))
        let again = verifier.verify(login("phone", "Pa55:w0rd", hash: phoneHash), on: loop)
        XCTAssertEqual(work.count, 1, "room again once the flood is checked")
        work.releaseAll()
        loop.run()
        XCTAssertEqual(try again.wait(), .accepted)
    }
}
