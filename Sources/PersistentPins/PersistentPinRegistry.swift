import CaptureStore
import Dispatch
import Foundation
import Logging
import ProxyCore
import ProxyModel

/// The `PinRegistry` the proxy runs with: the auto-pin policy in memory, its pins kept in the
/// capture database so they survive a restart.
///
/// A runtime service with its own target: it joins ProxyCore's policy to CaptureStore's table,
/// so neither has to import the other, and the engine sees only ProxyModel's `PinRegistry`.
///
/// The engine calls `pin(for:client:)` and `record(_:host:client:tlsVersion:)` on event loops: they only take a short
/// lock around the in-memory `AutoPinPolicy` and return. Every pin that changes is saved on the
/// registry's own serial queue (changes made while a save is pending are coalesced into it), and
/// every pin the policy evicts to stay within `--max-pins` is deleted there; a database error is
/// logged once per outage and never reaches the engine, and the changes that could not be saved
/// are retried with the next save. Every `refreshInterval` the queue reads the table's change
/// count (`pin_changes`, kept by triggers) and re-reads the pins only when someone else changed
/// them (`proxyapp pins remove` in another process), so an idle refresh costs one row read
/// however many pins there are; `reload()` re-reads at once.
///
/// Locking: `NSLock` (the store does not import NIO, and `Synchronization.Mutex` needs macOS 15)
/// guards the policy and the unsaved pins; the other stored properties are immutable or only
/// touched on `queue`, hence `@unchecked Sendable`.
public final class PersistentPinRegistry: PinRegistry, @unchecked Sendable {
    /// How long a pin lasts after its host's last failure.
    public let ttl: TimeInterval
    /// How many pins, and how many new ones per client a minute.
    public let limits: AutoPinPolicy.Limits

    private let repository: any PinStore
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "proxyapp.pins")
    private var refreshTimer: (any DispatchSourceTimer)?

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var policy: AutoPinPolicy
    /// Pins changed in memory and not saved yet, by host and client. Guarded by `lock`.
    private var unsaved: [PinnedDomain.Key: PinnedDomain] = [:]
    /// Pins evicted in memory and not deleted from the table yet. Guarded by `lock`.
    private var unsavedRemovals: Set<PinnedDomain.Key> = []
    /// True while a save is queued and has not yet taken `unsaved`. Guarded by `lock`.
    private var saveQueued = false
    /// True from a failed database access until one succeeds. Touched only on `queue`.
    private var inOutage = false
    /// The table's change count as of the pins held; nil forces the next refresh to re-read.
    /// Touched only on `queue` (and in `init`).
    private var knownChangeCount: Int64?
    /// How many times the whole table was read (for the test that idle refreshes do not).
    /// Touched only on `queue`.
    private(set) var tableReads = 0

    /// Loads the stored pins, deleting the expired ones (and the oldest past `limits.maximumPins`),
    /// and starts the periodic refresh. Blocks on the database: call it before the server
    /// starts, never on an event loop.
    ///
    /// - Parameters:
    ///   - refreshInterval: how often the change count is checked; nil never.
    ///   - startsDuringOutage: a store that cannot be read now (a shared store's server down) is
    ///     not an error: the registry starts with no pins, logs the outage once, and reads the
    ///     pins at the first refresh that reaches the store.
    ///   - now: the clock (tests inject one).
    /// - Throws: the database's error when the pins cannot be read or the expired ones deleted
    ///   (unless `startsDuringOutage`).
    public init(repository: any PinStore, ttl: TimeInterval, limits: AutoPinPolicy.Limits = .init(),
                logger: Logger, refreshInterval: TimeInterval? = 5, startsDuringOutage: Bool = false,
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.repository = repository
        self.ttl = ttl
        self.limits = limits
        self.logger = logger
        self.now = now
        policy = AutoPinPolicy(ttl: ttl, limits: limits)
        let loadedAt = now()
        do {
            try repository.removePins(expiredBefore: loadedAt.addingTimeInterval(-ttl))
            let stored = try repository.pinnedDomainsAndChangeCount()
            tableReads = 1
            let dropped = policy.load(stored.pins.filter { !$0.isExpired(ttl: ttl, now: loadedAt) })
            knownChangeCount = dropped.isEmpty
                ? stored.changeCount
                : try repository.applyPinChanges(saving: [], removing: dropped.map(\.key)).after
        } catch where startsDuringOutage {
            reportFailure("cannot read pinned hosts", error)  // knownChangeCount nil: the next refresh reads them
        }
        if let refreshInterval {
            startRefreshing(every: refreshInterval)
        }
    }

    deinit {
        refreshTimer?.cancel()
    }

    // MARK: - The engine's calls (event loops: memory only)

    public func pin(for host: String, client: ClientIdentity) -> PinnedDomain? {
        let now = now()
        return lock.withLock { policy.pin(for: host, client: client, now: now) }
    }

    /// Every live pin for `host`, whatever the client (a scan: for tests and tools, not the engine).
    public func pins(for host: String) -> [PinnedDomain] {
        let now = now()
        return lock.withLock { policy.pins(for: host, now: now) }
    }

    @discardableResult
    public func record(_ outcome: HandshakeOutcome, host: String, client: ClientIdentity, tlsVersion: String?) -> PinUpdate {
        let now = now()
        let (update, mustQueueSave): (PinUpdate, Bool) = lock.withLock {
            let change = policy.record(outcome, host: host, client: client, tlsVersion: tlsVersion, now: now)
            guard change.changedPin != nil || !change.evicted.isEmpty else { return (change.update, false) }
            if let pin = change.changedPin {
                unsaved[pin.key] = pin
                unsavedRemovals.remove(pin.key)
            }
            for pin in change.evicted {
                unsaved[pin.key] = nil
                unsavedRemovals.insert(pin.key)
            }
            defer { saveQueued = true }
            return (change.update, !saveQueued)
        }
        if mustQueueSave {
            queue.async { self.saveUnsaved() }
        }
        return update
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

    /// What the periodic refresh does, now, and waits for it: re-reads only when the table's
    /// change count moved.
    func refresh() {
        queue.sync { refreshOnQueue() }
    }

    /// `tableReads`, read on the queue.
    var tableReadCount: Int {
        queue.sync { tableReads }
    }

    // MARK: - On `queue`

    private func saveUnsaved() {
        let (pins, removals): ([PinnedDomain], [PinnedDomain.Key]) = lock.withLock {
            saveQueued = false
            defer {
                unsaved = [:]
                unsavedRemovals = []
            }
            return (Array(unsaved.values), Array(unsavedRemovals))
        }
        do {
            let counts = try repository.applyPinChanges(saving: pins, removing: removals)
            // Only our own change since we last looked: the held pins are the table's.
            if counts.before == knownChangeCount { knownChangeCount = counts.after }
            inOutage = false
        } catch {
            reportFailure("cannot save pinned hosts", error)
            lock.withLock {
                // Keep them for the next save, unless a newer change of the host is already waiting.
                for pin in pins where unsaved[pin.key] == nil && !unsavedRemovals.contains(pin.key) {
                    unsaved[pin.key] = pin
                }
                for key in removals where unsaved[key] == nil {
                    unsavedRemovals.insert(key)
                }
            }
        }
    }

    private func refreshOnQueue() {
        do {
            let count = try repository.pinChangeCount()
            inOutage = false
            guard count != knownChangeCount else { return }
        } catch {
            reportFailure("cannot read pinned hosts", error)
            return
        }
        reloadOnQueue()
    }

    private func reloadOnQueue() {
        let stored: (pins: [PinnedDomain], changeCount: Int64)
        do {
            stored = try repository.pinnedDomainsAndChangeCount()
            tableReads += 1
            inOutage = false
        } catch {
            reportFailure("cannot read pinned hosts", error)
            return
        }
        let now = now()
        let mustSave: Bool = lock.withLock {
            var pins: [PinnedDomain.Key: PinnedDomain] = [:]
            for pin in stored.pins where !pin.isExpired(ttl: ttl, now: now) && !unsavedRemovals.contains(pin.key) {
                pins[pin.key] = pin
            }
            pins.merge(unsaved) { _, newer in newer }
            // More than the limit in the table (written by another process): drop the oldest there too.
            for pin in policy.load(Array(pins.values)) {
                unsaved[pin.key] = nil
                unsavedRemovals.insert(pin.key)
            }
            return !(unsaved.isEmpty && unsavedRemovals.isEmpty) && !saveQueued
        }
        knownChangeCount = stored.changeCount
        if mustSave {
            saveUnsaved()  // changes a failed save left behind, or the excess dropped above
        }
    }

    private func reportFailure(_ what: String, _ error: any Error) {
        guard !inOutage else { return }
        inOutage = true
        logger.error("\(what) in \(repository.pinStoreDescription): \(error). Pins still apply until the proxy stops; this is logged once per outage.")
    }

    private func startRefreshing(every interval: TimeInterval) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.refreshOnQueue() }
        timer.resume()
        refreshTimer = timer
    }
}
