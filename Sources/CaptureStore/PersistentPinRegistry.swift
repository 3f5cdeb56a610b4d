import Dispatch
import Foundation
import Logging
import ProxyCore
import ProxyModel

/// The `PinRegistry` the proxy runs with: the auto-pin policy in memory, its pins kept in the
/// capture database so they survive a restart.
///
/// The engine calls `pin(for:)` and `record(_:host:)` on event loops: they only take a short
/// lock around the in-memory `AutoPinPolicy` and return. Every pin that changes is saved on the
/// registry's own serial queue (changes made while a save is pending are coalesced into it); a
/// database error is logged once per outage and never reaches the engine, and the pins that
/// could not be saved are retried with the next save. The queue also re-reads the table every
/// `refreshInterval` (and on `reload()`), so `proxyapp pins remove` in another process takes
/// effect on a running proxy.
///
/// Locking: `NSLock` (the store does not import NIO, and `Synchronization.Mutex` needs macOS 15)
/// guards the policy and the unsaved pins; the other stored properties are immutable or only
/// touched on `queue`, hence `@unchecked Sendable`.
public final class PersistentPinRegistry: PinRegistry, @unchecked Sendable {
    /// How long a pin lasts after its host's last failure.
    public let ttl: TimeInterval

    private let repository: TrafficRepository
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "proxyapp.pins")
    private var refreshTimer: (any DispatchSourceTimer)?

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var policy: AutoPinPolicy
    /// Pins changed in memory and not saved yet, by host. Guarded by `lock`.
    private var unsaved: [String: PinnedDomain] = [:]
    /// True while a save is queued and has not yet taken `unsaved`. Guarded by `lock`.
    private var saveQueued = false
    /// True from a failed database access until one succeeds. Touched only on `queue`.
    private var inOutage = false

    /// Loads the stored pins, deleting the expired ones, and starts the periodic refresh.
    /// Blocks on the database: call it before the server starts, never on an event loop.
    ///
    /// - Parameters:
    ///   - refreshInterval: how often the pins are re-read from the database; nil never.
    ///   - now: the clock (tests inject one).
    /// - Throws: the database's error when the pins cannot be read or the expired ones deleted.
    public init(repository: TrafficRepository, ttl: TimeInterval, logger: Logger,
                refreshInterval: TimeInterval? = 5, now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.repository = repository
        self.ttl = ttl
        self.logger = logger
        self.now = now
        policy = AutoPinPolicy(ttl: ttl)
        let loadedAt = now()
        try repository.removePins(expiredBefore: loadedAt.addingTimeInterval(-ttl))
        policy.load(try repository.pinnedDomains().filter { !$0.isExpired(ttl: ttl, now: loadedAt) })
        if let refreshInterval {
            startRefreshing(every: refreshInterval)
        }
    }

    deinit {
        refreshTimer?.cancel()
    }

    // MARK: - The engine's calls (event loops: memory only)

    public func pin(for host: String) -> PinnedDomain? {
        let now = now()
        return lock.withLock { policy.pin(for: host, now: now) }
    }

    public func record(_ outcome: HandshakeOutcome, host: String) {
        let now = now()
        let mustQueueSave: Bool = lock.withLock {
            guard let changed = policy.record(outcome, host: host, now: now) else { return false }
            unsaved[changed.host] = changed
            defer { saveQueued = true }
            return !saveQueued
        }
        if mustQueueSave {
            queue.async { self.saveUnsaved() }
        }
    }

    // MARK: - Maintenance (blocking: never on an event loop)

    /// Blocks until every pin changed before the call is written (or its failure logged). For
    /// shutdown and tests.
    public func flush() {
        queue.sync {}
    }

    /// Re-reads the pins from the database now and waits for it: pins removed there (by
    /// `proxyapp pins remove`) stop applying, pins added there start to. Changes not yet saved
    /// are kept.
    public func reload() {
        queue.sync { reloadOnQueue() }
    }

    // MARK: - On `queue`

    private func saveUnsaved() {
        let pins: [PinnedDomain] = lock.withLock {
            saveQueued = false
            defer { unsaved = [:] }
            return Array(unsaved.values)
        }
        do {
            try repository.savePins(pins)
            inOutage = false
        } catch {
            reportFailure("cannot save pinned hosts", error)
            lock.withLock {
                // Keep them for the next save, unless a newer version is already waiting.
                for pin in pins where unsaved[pin.host] == nil {
                    unsaved[pin.host] = pin
                }
            }
        }
    }

    private func reloadOnQueue() {
        let stored: [PinnedDomain]
        do {
            stored = try repository.pinnedDomains()
            inOutage = false
        } catch {
            reportFailure("cannot read pinned hosts", error)
            return
        }
        let now = now()
        let hasUnsaved: Bool = lock.withLock {
            var pins: [String: PinnedDomain] = [:]
            for pin in stored where !pin.isExpired(ttl: ttl, now: now) {
                pins[pin.host] = pin
            }
            pins.merge(unsaved) { _, newer in newer }
            policy.load(Array(pins.values))
            return !unsaved.isEmpty && !saveQueued
        }
        if hasUnsaved {
            saveUnsaved()  // pins a failed save left behind
        }
    }

    private func reportFailure(_ what: String, _ error: any Error) {
        guard !inOutage else { return }
        inOutage = true
        logger.error("\(what) in \(repository.database.path): \(error). Pins still apply until the proxy stops; this is logged once per outage.")
    }

    private func startRefreshing(every interval: TimeInterval) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.reloadOnQueue() }
        timer.resume()
        refreshTimer = timer
    }
}
