import NIOConcurrencyHelpers
import NIOCore
import ProxyCore

/// The names being looked up and the requests waiting for each: one lookup per name in flight
/// at once (single flight), each request answered within its own timeout, all of them bounded.
///
/// - every waiter gets an answer within `timeout` (`ProxyFailure.dnsTimeout`); an answer that
///   comes later is dropped for it;
/// - requests for one name in flight share one lookup, whatever their ports: a stuck name costs
///   one query, however many requests want it;
/// - at most `maxPendingNames` names are in flight (those nobody waits for any more included,
///   until the backend gives up on them); past that a lookup fails at once with a reason;
/// - `shutdown()` answers every waiter at once and stops the backend.
///
/// Each waiter's promise is completed by whoever removes it from `flights` under the lock (the
/// answer, its timeout, or the shutdown), so exactly once, and only while its event loop
/// still runs: after `shutdown()` a late answer finds nobody.
final class LookupFlights: Sendable {
    /// A request waiting for a name, and the port its addresses get.
    private struct Waiter {
        var promise: EventLoopPromise<[SocketAddress]>
        var port: Int
    }

    /// One lookup in flight and the requests waiting for it.
    private struct Flight {
        var id: Int
        var waiters: [Int: Waiter] = [:]
    }

    private struct State {
        var open = true
        var nextID = 0
        var flights: [String: Flight] = [:]

        mutating func makeID() -> Int {
            nextID += 1
            return nextID
        }
    }

    private let state = NIOLockedValueBox(State())
    private let backend: any NameLookupBackend
    private let timeout: TimeAmount
    private let maxPendingNames: Int

    init(backend: any NameLookupBackend, maxPendingNames: Int, timeout: TimeAmount) {
        precondition(maxPendingNames > 0, "lookups need room for at least one name")
        self.backend = backend
        self.maxPendingNames = maxPendingNames
        self.timeout = timeout
    }

    /// How many names are in flight (waited for or not).
    var namesInFlight: Int {
        state.withLockedValue { $0.flights.count }
    }

    /// The addresses of `host` with `port`, completed on `eventLoop` within the timeout.
    func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        let promise = eventLoop.makePromise(of: [SocketAddress].self)
        enum Admission { case joined(Int), started(flight: Int, waiter: Int), refused(ProxyFailure) }
        let admission = state.withLockedValue { state -> Admission in
            guard state.open else {
                return .refused(.dnsFailure(host: host, reason: "the proxy is shutting down"))
            }
            let waiter = state.makeID()
            if state.flights[host] != nil {
                state.flights[host]!.waiters[waiter] = Waiter(promise: promise, port: port)
                return .joined(waiter)
            }
            guard state.flights.count < maxPendingNames else {
                return .refused(.dnsFailure(
                    host: host, reason: "too many lookups in progress (\(maxPendingNames) names); try again later"))
            }
            let flight = Flight(id: state.makeID(), waiters: [waiter: Waiter(promise: promise, port: port)])
            state.flights[host] = flight
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
            backend.lookUp(host) { result in self.land(host, flight: flight, result) }
        }
        let milliseconds = timeout.nanoseconds / 1_000_000
        let timer = eventLoop.scheduleTask(in: timeout) {
            self.timeOut(host, waiter: waiter, milliseconds: milliseconds)
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    /// Answers every waiting request with "shutting down", refuses new ones, then stops the
    /// backend (whose late answers find nobody).
    func shutdown() {
        let waiting = state.withLockedValue { state -> [(String, EventLoopPromise<[SocketAddress]>)] in
            guard state.open else { return [] }
            state.open = false
            defer { state.flights = [:] }
            return state.flights.flatMap { host, flight in flight.waiters.values.map { (host, $0.promise) } }
        }
        for (host, promise) in waiting {
            promise.fail(ProxyFailure.dnsFailure(host: host, reason: "the proxy is shutting down"))
        }
        backend.shutdown()
    }

    /// The backend's answer for `host`: every request still waiting gets it, with its own port.
    private func land(_ host: String, flight id: Int, _ result: Result<[SocketAddress], NameLookupError>) {
        let waiters = state.withLockedValue { state -> [Waiter] in
            guard state.flights[host]?.id == id else { return [] }
            return Array(state.flights.removeValue(forKey: host)!.waiters.values)
        }
        guard !waiters.isEmpty else { return }
        let milliseconds = timeout.nanoseconds / 1_000_000
        for waiter in waiters {
            switch result {
            case .success(let addresses):
                waiter.promise.succeed(addresses.map { address in
                    var address = address
                    address.port = waiter.port
                    return address
                })
            case .failure(.noAnswer):
                waiter.promise.fail(ProxyFailure.dnsTimeout(host: host, milliseconds: milliseconds))
            case .failure(.failed(let reason)):
                waiter.promise.fail(ProxyFailure.dnsFailure(host: host, reason: reason))
            }
        }
    }

    /// A waiter's time is up: it gets `dnsTimeout` unless its answer came first. The lookup
    /// stays in flight, so a new request for the name joins it instead of sending another.
    private func timeOut(_ host: String, waiter: Int, milliseconds: Int64) {
        let promise = state.withLockedValue { state in
            state.flights[host]?.waiters.removeValue(forKey: waiter)?.promise
        }
        promise?.fail(ProxyFailure.dnsTimeout(host: host, milliseconds: milliseconds))
    }
}
