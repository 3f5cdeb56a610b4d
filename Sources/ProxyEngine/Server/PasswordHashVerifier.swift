import CCrypt
import NIOConcurrencyHelpers
import NIOCore
import ProxyCore

/// Checks `--auth-file` logins against their bcrypt hashes (libxcrypt's `crypt_r`) on the
/// blocking pool — a check takes milliseconds to a quarter of a second, far too long for an
/// event loop — and remembers verdicts, so a client's later requests are answered at once.
///
/// Bounded so that a client guessing passwords cannot take the pool from map-local reads and
/// rewrites: at most `maxRunning` checks run at a time and `maxWaiting` distinct logins wait;
/// beyond that a login is refused at once as busy (the client may retry). The same login asked
/// for again while it is being checked waits for that one check. Verdicts are kept by the
/// login's SHA-256 (never the password), up to `maxRemembered` of each kind; then forgotten.
final class PasswordHashVerifier: Sendable {
    enum Verdict: Sendable, Equatable {
        case accepted
        case rejected
        /// Too many logins are being checked: nothing was decided.
        case busy
    }

    private struct State {
        var accepted = Set<[UInt8]>()
        var rejected = Set<[UInt8]>()
        /// Per login being checked or waiting: who waits for its verdict.
        var pending: [[UInt8]: [EventLoopPromise<Verdict>]] = [:]
        /// Logins waiting for a turn, in order, with the loop of the first to ask.
        var queue: [(HashedLogin, any EventLoop)] = []
        var running = 0
    }

    private let state = NIOLockedValueBox(State())
    private let blockingWork: any BlockingWork
    let maxRunning: Int
    let maxWaiting: Int
    let maxRemembered: Int

    init(blockingWork: any BlockingWork, maxRunning: Int = 2, maxWaiting: Int = 32, maxRemembered: Int = 4096) {
        self.blockingWork = blockingWork
        self.maxRunning = maxRunning
        self.maxWaiting = maxWaiting
        self.maxRemembered = maxRemembered
    }

    /// A verdict already known for `login`, without checking.
    func remembered(_ login: HashedLogin) -> Verdict? {
        state.withLockedValue { state in
            if state.accepted.contains(login.key) { return .accepted }
            if state.rejected.contains(login.key) { return .rejected }
            return nil
        }
    }

    /// The verdict for `login`, completed on `eventLoop`.
    func verify(_ login: HashedLogin, on eventLoop: any EventLoop) -> EventLoopFuture<Verdict> {
        let promise = eventLoop.makePromise(of: Verdict.self)
        let start: HashedLogin? = state.withLockedValue { state in
            if state.accepted.contains(login.key) {
                promise.succeed(.accepted)
                return nil
            }
            if state.rejected.contains(login.key) {
                promise.succeed(.rejected)
                return nil
            }
            if state.pending[login.key] != nil {
                state.pending[login.key]!.append(promise)
                return nil
            }
            guard state.pending.count < maxRunning + maxWaiting else {
                promise.succeed(.busy)
                return nil
            }
            state.pending[login.key] = [promise]
            guard state.running < maxRunning else {
                state.queue.append((login, eventLoop))
                return nil
            }
            state.running += 1
            return login
        }
        if let start { run(start, on: eventLoop) }
        return promise.futureResult
    }

    private func run(_ login: HashedLogin, on eventLoop: any EventLoop) {
        blockingWork.run(on: eventLoop) { Self.matches(password: login.password, hash: login.hash) }
            .whenComplete { result in
                let matched = (try? result.get()) ?? false
                let (waiters, next) = self.state.withLockedValue { state -> ([EventLoopPromise<Verdict>], (HashedLogin, any EventLoop)?) in
                    if matched {
                        if state.accepted.count >= self.maxRemembered { state.accepted.removeAll(keepingCapacity: true) }
                        state.accepted.insert(login.key)
                    } else {
                        if state.rejected.count >= self.maxRemembered { state.rejected.removeAll(keepingCapacity: true) }
                        state.rejected.insert(login.key)
                    }
                    let waiters = state.pending.removeValue(forKey: login.key) ?? []
                    if state.queue.isEmpty {
                        state.running -= 1
                        return (waiters, nil)
                    }
                    return (waiters, state.queue.removeFirst())
                }
                for promise in waiters { promise.succeed(matched ? .accepted : .rejected) }
                if let next { self.run(next.0, on: next.1) }
            }
    }

    /// Whether `password` hashes to `hash` (bcrypt, through `crypt_r`), compared in constant time.
    static func matches(password: [UInt8], hash: String) -> Bool {
        // crypt_r takes a C string: a password with a NUL byte cannot be what was hashed.
        guard !password.contains(0) else { return false }
        var data = crypt_data()
        let computed: [UInt8]? = withUnsafeMutablePointer(to: &data) { pointer in
            (password + [0]).withUnsafeBufferPointer { passwordBytes in
                passwordBytes.withMemoryRebound(to: CChar.self) { passwordChars in
                    guard let result = crypt_r(passwordChars.baseAddress, hash, pointer) else { return nil }
                    return Array(String(cString: result).utf8)
                }
            }
        }
        let expected = Array(hash.utf8)
        guard let computed, computed.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= computed[index] ^ expected[index] }
        return difference == 0
    }
}
