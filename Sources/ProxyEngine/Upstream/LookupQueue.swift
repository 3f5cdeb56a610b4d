import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ProxyCore

/// Runs blocking name lookups on threads of their own, so a lookup never waits behind other
/// blocking work (map-local reads, body rewrites) and never holds an event loop.
///
/// Bounded in every direction, because `getaddrinfo` cannot be cancelled and may block for
/// tens of seconds when a DNS server does not answer:
/// - every waiter gets an answer within `timeout` (`ProxyFailure.dnsTimeout`); an answer that
///   comes later is dropped;
/// - lookups of one host and port in flight at once share one call (single flight), so a stuck
///   name holds one thread, not one per request;
/// - at most `maxPendingNames` names are queued or running; past that a lookup fails at once;
/// - a queued lookup nobody waits for any more (all its waiters timed out) is never started;
/// - `shutdown()` answers every waiter at once and never waits for a call still running.
///
/// Each waiter's promise is completed by whoever removes it from `flights` under the lock (the
/// answer, its timeout, or the shutdown), so it is completed exactly once, and only while its
/// event loop still runs: after `shutdown()` a late answer finds nobody.
final class LookupQueue: Sendable {
    typealias LookUp = @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]

    private struct Key: Hashable {
        var host: String
        var port: Int
    }

    /// One lookup, queued or running, and the requests waiting for it.
    private struct Flight {
        var id: Int
        var waiters: [Int: EventLoopPromise<[SocketAddress]>] = [:]
        var started = false
    }

    private struct State {
        var open = true
        var nextID = 0
        var flights: [Key: Flight] = [:]

        mutating func makeID() -> Int {
            nextID += 1
            return nextID
        }
    }

    private let state = NIOLockedValueBox(State())
    private let threads: NIOThreadPool
    private let lookUp: LookUp
    private let timeout: TimeAmount
    private let maxPendingNames: Int

    init(threads: Int, maxPendingNames: Int, timeout: TimeAmount, lookUp: @escaping LookUp) {
        precondition(threads > 0 && maxPendingNames > 0, "a lookup queue needs threads and room")
        self.threads = NIOThreadPool(numberOfThreads: threads)
        self.maxPendingNames = maxPendingNames
        self.timeout = timeout
        self.lookUp = lookUp
        self.threads.start()
    }

    deinit {
        shutdown()
    }

    /// The addresses of `host`, completed on `eventLoop` within the timeout.
    func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        let key = Key(host: host, port: port)
        let promise = eventLoop.makePromise(of: [SocketAddress].self)
        enum Admission { case joined(Int), started(flight: Int, waiter: Int), refused(ProxyFailure) }
        let admission = state.withLockedValue { state -> Admission in
            guard state.open else {
                return .refused(.dnsFailure(host: host, reason: "the proxy is shutting down"))
            }
            let waiter = state.makeID()
            if state.flights[key] != nil {
                state.flights[key]!.waiters[waiter] = promise
                return .joined(waiter)
            }
            guard state.flights.count < maxPendingNames else {
                return .refused(.dnsFailure(
                    host: host, reason: "too many lookups in progress (\(maxPendingNames) names); try again later"))
            }
            let flight = Flight(id: state.makeID(), waiters: [waiter: promise])
            state.flights[key] = flight
            return .started(flight: flight.id, waiter: waiter)
        }
        let waiter: Int
        switch admission {
        case .refused(let failure):
            promise.fail(failure)
            return promise.futureResult
        case .joined(let id):
            waiter = id
        case .started(let flight, let id):
            waiter = id
            threads.submit { workState in self.run(key, flight: flight, active: workState == .active) }
        }
        let milliseconds = timeout.nanoseconds / 1_000_000
        let timer = eventLoop.scheduleTask(in: timeout) {
            self.timeOut(key, waiter: waiter, host: host, milliseconds: milliseconds)
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    /// Answers every waiting lookup with "shutting down" and refuses new ones. Lookups still
    /// running are left to finish on their own threads; nobody is told their answer.
    func shutdown() {
        let waiting = state.withLockedValue { state -> [(String, EventLoopPromise<[SocketAddress]>)] in
            guard state.open else { return [] }
            state.open = false
            defer { state.flights = [:] }
            return state.flights.flatMap { key, flight in flight.waiters.values.map { (key.host, $0) } }
        }
        for (host, promise) in waiting {
            promise.fail(ProxyFailure.dnsFailure(host: host, reason: "the proxy is shutting down"))
        }
        threads.shutdownGracefully { _ in }
    }

    /// On a lookup thread: looks `key` up unless nobody waits for it any more, then answers
    /// whoever still waits.
    private func run(_ key: Key, flight id: Int, active: Bool) {
        let wanted = state.withLockedValue { state -> Bool in
            guard active, state.flights[key]?.id == id else { return false }
            guard !state.flights[key]!.waiters.isEmpty else {
                state.flights[key] = nil
                return false
            }
            state.flights[key]!.started = true
            return true
        }
        guard wanted else { return }
        let result = Result { try lookUp(key.host, key.port) }
        let waiters = state.withLockedValue { state -> [EventLoopPromise<[SocketAddress]>] in
            guard state.flights[key]?.id == id else { return [] }
            return Array(state.flights.removeValue(forKey: key)!.waiters.values)
        }
        for promise in waiters {
            promise.completeWith(result)
        }
    }

    /// A waiter's time is up: it gets `dnsTimeout` unless its answer came first. A queued
    /// lookup left without waiters is dropped here (it would only hold a place in the queue); a
    /// running one stays, so a new request for the name joins it instead of taking a thread.
    private func timeOut(_ key: Key, waiter: Int, host: String, milliseconds: Int64) {
        let promise = state.withLockedValue { state -> EventLoopPromise<[SocketAddress]>? in
            guard let promise = state.flights[key]?.waiters.removeValue(forKey: waiter) else { return nil }
            if let flight = state.flights[key], flight.waiters.isEmpty, !flight.started {
                state.flights[key] = nil
            }
            return promise
        }
        promise?.fail(ProxyFailure.dnsTimeout(host: host, milliseconds: milliseconds))
    }
}
