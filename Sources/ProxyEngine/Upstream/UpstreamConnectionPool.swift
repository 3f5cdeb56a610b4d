import NIOCore
import ProxyCore

/// Idle upstream HTTP connections kept for reuse, per origin, for one event loop.
///
/// Bounded twice: `maxIdlePerKey` per origin (a returned connection beyond it is closed) and
/// `maxIdle` in all (the oldest idle connection, whatever its origin, is closed to make room),
/// so visiting thousands of distinct hosts cannot hold thousands of descriptors
/// (`ConnectionBudget`).
///
/// Beyond `warmPerKey` idle connections to an origin, the oldest are closed once they have idled
/// `surplusIdleTime` (the others keep the upstream timeout): after a burst of 50 concurrent
/// exchanges, 50 TLS connections (about 100 KiB each: buffers, the TLS session) waited a
/// minute, while steady traffic reuses a connection within milliseconds. One sweep task per pool
/// does it, scheduled only while there is a surplus, so a check-in costs no timer.
///
/// Not thread-safe on purpose: each event loop owns one pool and only its channels use it, so a
/// client connection always gets an upstream connection on its own loop.
final class UpstreamConnectionPool {
    struct Key: Hashable {
        var host: String
        var port: Int
        /// TLS connections are kept apart from plain ones, and per SNI name.
        var tls: Bool = false
        var serverName: String?
        /// The addresses a `dns` rule connected to, joined; nil when the host was resolved.
        /// Connections made under an override are never handed to requests without it.
        var addressOverride: String?
        /// Dialled for a client kept from this machine's own addresses: never shared with
        /// clients that are not (and the other way round), so a pooled connection to a local
        /// service never reaches a guarded client.
        var guardsInternal = false
        /// The upstream proxy the connection goes through; nil: direct.
        var via: UpstreamProxy?
        /// The throttle its reads are paced by (`ThrottledReads`): throttled exchanges never share
        /// a connection with others (an HTTP/2 one would slow them all); nil: not throttled.
        var throttle: ThrottleProfile?
        /// Dialled offering `h2` in ALPN (`UpstreamTLSSettings.offersHTTP2`): a connection made
        /// for HTTP/1.1 clients never serves an HTTP/2 client, which would then reach an origin
        /// that speaks HTTP/2 over HTTP/1.1.
        var offersHTTP2 = false
    }

    fileprivate struct Entry {
        var channel: any Channel
        var handler: UpstreamHTTPHandler
        /// When it was checked in, in check-in order across all origins.
        var sequence: UInt64
        /// When it was checked in, for the surplus sweep.
        var idleSince: NIODeadline
    }

    /// One origin's idle connections, oldest first (check-ins append, check-outs take the
    /// newest). A class, changed where it is: changing an array held in the dictionary goes
    /// through the dictionary's modify accessors, three nested coroutines whose frames (a `Key`
    /// is large) were three allocations per check-out.
    ///
    /// A connection remembers the list it idled in (`UpstreamHTTPHandler.poolSlot`), so its next
    /// check-ins neither hash its key nor make a closure: under keep-alive load the same
    /// connections go out and back thousands of times a second, and the key's hashing, its
    /// copies and two closures per check-in were 2.3 % of the event loops' samples.
    final class IdleList {
        let key: Key
        /// The pool that holds it, and whether it still does (`forgetEmptyOrigins` drops it).
        fileprivate let pool: ObjectIdentifier
        fileprivate var isHeld = true
        fileprivate var entries: [Entry] = []

        fileprivate init(key: Key, pool: ObjectIdentifier) {
            self.key = key
            self.pool = pool
        }
    }

    /// Per origin.
    private var idle: [Key: IdleList] = [:]
    /// Every check-in in order, for finding the oldest idle connection; entries whose
    /// connection has left meanwhile are skipped when met and dropped by `compactOrder`.
    private var order = CircularBuffer<(sequence: UInt64, list: IdleList)>()
    private var nextSequence: UInt64 = 0
    /// HTTP/2 connections per origin, each shared by many exchanges at once; a connection leaves
    /// when it closes or the origin sends GOAWAY (`UpstreamHTTP2Connection.onRetire`).
    private var multiplexed: [Key: [UpstreamHTTP2Connection]] = [:]
    private(set) var idleCount = 0
    /// Idle connections per origin kept for the whole upstream timeout.
    static let warmPerKey = 4
    /// How long the others may idle.
    static let surplusIdleTime = TimeAmount.seconds(5)
    private let maxIdlePerKey: Int
    private let maxIdle: Int
    /// The surplus sweep is scheduled (on the pool's event loop).
    private var sweepScheduled = false

    init(maxIdlePerKey: Int, maxIdle: Int = .max) {
        self.maxIdlePerKey = maxIdlePerKey
        self.maxIdle = maxIdle
    }

    /// An idle, still-open connection to `key`, most recently used first.
    func checkout(_ key: Key) -> (any Channel, UpstreamHTTPHandler)? {
        // Mutate in place (no copy of the array, and an emptied list keeps its storage for the
        // next check-in: origins are reused constantly under load).
        guard let list = idle[key] else { return nil }
        while let entry = list.entries.popLast() {
            idleCount -= 1
            entry.handler.onIdleClose = nil
            if entry.channel.isActive {
                return (entry.channel, entry.handler)
            }
        }
        return nil
    }

    /// An HTTP/2 connection to `key` that can take one more stream now.
    func multiplexedConnection(_ key: Key) -> UpstreamHTTP2Connection? {
        multiplexed[key]?.first { $0.hasCapacity }
    }

    /// Shares a new HTTP/2 connection with later exchanges to the same origin, up to
    /// `maxIdlePerKey` connections per origin and `maxIdle` in all (an idle one of another
    /// origin is closed to make room, as for HTTP/1). One the pool does not take carries the
    /// exchange that opened it and closes when its streams end.
    func register(_ key: Key, multiplexed connection: UpstreamHTTP2Connection) {
        if speaksHTTP2.count >= 4096 { speaksHTTP2.removeAll(keepingCapacity: true) }
        speaksHTTP2.insert(key)
        guard (multiplexed[key]?.count ?? 0) < maxIdlePerKey, maxIdle > 0 else { return }
        if multiplexedCount >= maxIdle {
            guard let idle = multiplexed.values.lazy.flatMap({ $0 }).first(where: { $0.isIdle }) else { return }
            idle.close()  // leaves through its onRetire
        }
        connection.isShared = true
        multiplexedCount += 1
        multiplexed[key, default: []].append(connection)
        connection.onRetire = { [unowned connection] in
            let before = self.multiplexed[key]?.count ?? 0
            self.multiplexed[key]?.removeAll { $0 === connection }
            self.multiplexedCount -= before - (self.multiplexed[key]?.count ?? 0)
            if self.multiplexed[key]?.isEmpty == true { self.multiplexed[key] = nil }
        }
    }

    /// Origins whose last new connection chose HTTP/2: while one such connection is being
    /// opened, other exchanges to that origin wait for it rather than each opening their own.
    private var speaksHTTP2: Set<Key> = []
    /// Exchanges waiting for the HTTP/2 connection being opened to an origin, per origin.
    private var http2DialWaiters: [Key: [(UpstreamHTTP2Connection?) -> Void]] = [:]

    /// Queues `waiter` when an HTTP/2 connection to `key` is being opened (it is called with the
    /// connection, or nil when that failed or chose HTTP/1) and returns true; otherwise returns
    /// false, and when `key` is known to speak HTTP/2 the caller's connection becomes the one the
    /// next exchanges wait for (`finishHTTP2Dial`).
    func awaitHTTP2Dial(_ key: Key, _ waiter: @escaping (UpstreamHTTP2Connection?) -> Void) -> (queued: Bool, leads: Bool) {
        guard speaksHTTP2.contains(key) else { return (false, false) }
        if http2DialWaiters[key] != nil {
            http2DialWaiters[key]!.append(waiter)
            return (true, false)
        }
        http2DialWaiters[key] = []
        return (false, true)
    }

    /// The connection the waiters of `key` waited for is up (or failed: nil).
    func finishHTTP2Dial(_ key: Key, connection: UpstreamHTTP2Connection?) {
        if connection == nil { speaksHTTP2.remove(key) }
        let waiters = http2DialWaiters.removeValue(forKey: key) ?? []
        for waiter in waiters { waiter(connection) }
    }

    /// HTTP/2 connections kept, all origins.
    private(set) var multiplexedCount = 0

    /// Keeps a connection whose last exchange completed cleanly; closes it when the pool for
    /// that origin is full, and closes the oldest idle connection when the whole pool is.
    func checkin(_ key: Key, channel: any Channel, handler: UpstreamHTTPHandler) {
        handler.detach()
        handler.resumeReads()
        guard channel.isActive, maxIdle > 0 else {
            channel.close(promise: nil)
            return
        }
        let list = idleList(key, for: handler)
        guard list.entries.count < maxIdlePerKey else {
            channel.close(promise: nil)
            return
        }
        if idleCount >= maxIdle {
            evictOldest()
        }
        handler.onIdleClose = handler.poolSlotClose
        let sequence = nextSequence
        nextSequence += 1
        let now = channel.eventLoop.now
        list.entries.append(Entry(channel: channel, handler: handler, sequence: sequence, idleSince: now))
        if !sweepScheduled, list.entries.count > Self.warmPerKey {
            scheduleSweep(at: now + Self.surplusIdleTime, on: channel.eventLoop)
        }
        idleCount += 1
        order.append((sequence, list))
        if order.count > 2 * idleCount + 64 {
            compactOrder()
        }
    }

    /// The list of `key`'s idle connections: the one `handler` idled in last when it is this
    /// pool's, still held, for the same key; otherwise looked up (or made) and remembered by
    /// `handler`, with the closure that takes it out of the list if it closes while idle.
    private func idleList(_ key: Key, for handler: UpstreamHTTPHandler) -> IdleList {
        if let slot = handler.poolSlot, slot.isHeld, slot.pool == ObjectIdentifier(self), slot.key == key {
            return slot
        }
        if idle.count > 1024, idle.count > 2 * idleCount {
            forgetEmptyOrigins()
        }
        let list: IdleList
        if let existing = idle[key] {
            list = existing
        } else {
            list = IdleList(key: key, pool: ObjectIdentifier(self))
            idle[key] = list
        }
        handler.poolSlot = list
        // Strong on purpose: the pool outlives its connections (weak references are slow). The
        // handler holds the closure, hence unowned.
        handler.poolSlotClose = { [unowned handler] in self.remove(handler, from: list) }
        return list
    }

    /// Drops the lists of origins with nothing pooled, so visiting many hosts once leaves no
    /// trace; a connection still naming one of them looks its origin up again.
    private func forgetEmptyOrigins() {
        for list in idle.values where list.entries.isEmpty {
            list.isHeld = false
        }
        idle = idle.filter { !$0.value.entries.isEmpty }
    }

    private func scheduleSweep(at deadline: NIODeadline, on loop: any EventLoop) {
        sweepScheduled = true
        // Strong on purpose, as `onIdleClose`: the pool outlives its loop's tasks.
        loop.scheduleTask(deadline: deadline) { self.sweepSurplus(on: loop) }
    }

    /// Closes the connections beyond the warm few of each origin that have idled
    /// `surplusIdleTime` (oldest first), and comes back when the next one will have.
    private func sweepSurplus(on loop: any EventLoop) {
        sweepScheduled = false
        let now = loop.now
        var next: NIODeadline?
        var expired: [(IdleList, UInt64)] = []
        for list in idle.values where list.entries.count > Self.warmPerKey {
            for entry in list.entries.prefix(list.entries.count - Self.warmPerKey) {
                let due = entry.idleSince + Self.surplusIdleTime
                if due <= now {
                    expired.append((list, entry.sequence))
                } else {
                    next = min(next ?? due, due)
                }
            }
        }
        for (list, sequence) in expired {
            guard let index = list.entries.firstIndex(where: { $0.sequence == sequence }) else {
                continue
            }
            let entry = list.entries.remove(at: index)
            idleCount -= 1
            entry.handler.onIdleClose = nil
            entry.channel.close(promise: nil)
        }
        if let next { scheduleSweep(at: next, on: loop) }
    }

    /// Closes the idle connection checked in longest ago.
    private func evictOldest() {
        while let (sequence, list) = order.popFirst() {
            guard let index = list.entries.firstIndex(where: { $0.sequence == sequence }) else {
                continue  // checked out or closed since
            }
            let entry = list.entries.remove(at: index)
            idleCount -= 1
            entry.handler.onIdleClose = nil
            entry.channel.close(promise: nil)
            return
        }
    }

    /// Rebuilds `order` from the connections still idle, so check-ins that were checked out
    /// again (the common case under load) do not pile up. Runs after at least `idleCount + 64`
    /// check-ins, so its cost per check-in stays constant.
    private func compactOrder() {
        var live: [(sequence: UInt64, list: IdleList)] = []
        live.reserveCapacity(idleCount)
        for list in idle.values {
            for entry in list.entries { live.append((entry.sequence, list)) }
        }
        live.sort { $0.sequence < $1.sequence }
        order = CircularBuffer(live)
    }

    /// Entries in the eviction order, stale ones included (tests check it stays bounded).
    var evictionOrderCount: Int { order.count }

    private func remove(_ handler: UpstreamHTTPHandler, from list: IdleList) {
        guard let index = list.entries.firstIndex(where: { $0.handler === handler }) else { return }
        list.entries.remove(at: index)
        idleCount -= 1
    }
}
