import Foundation
import ProxyModel

/// Decides which hosts to stop intercepting, from the outcomes of TLS handshakes with clients.
///
/// A client that pins its server's certificate (or trusts only its own roots) refuses every
/// certificate we mint for that host; intercepting it again and again just breaks the app. The
/// rules, kept here without I/O, locks or clocks (the caller passes `now`) so they are tested
/// alone:
/// - an explicit rejection (`.rejected`) pins the host at once;
/// - an ambiguous EOF during the handshake pins only after `ambiguousFailuresToPin` of them
///   within `ambiguousWindow` seconds with no completed handshake for the host in between (a
///   client that simply went away looks the same once);
/// - `.completed` clears the host's ambiguous history; `.notAPinSignal` changes nothing;
/// - a pin expires `ttl` seconds after its last failure, and is then dropped: the host is
///   intercepted again, and pinned again if it still refuses;
/// - another failure of a pinned host updates the pin's `lastSeen` and `count` (a renewal);
/// - bounds, because a client chooses what it rejects and pins apply to every client: at most
///   `limits.maximumPins` pins are held (a new one evicts the pin seen longest ago), and one
///   client address makes at most `limits.newPinsPerClientPerMinute` new pins a minute
///   (`PinRateLimit`); an outcome over the rate is `.refused`, and the host stays intercepted.
///   At most `limits.maximumPins` hosts have an ambiguous-failure history at once.
/// Hosts compare as `HostName.normalized` forms (case, a trailing dot, IDN and IPv6 spellings
/// do not matter), the same form every host pattern matches against.
public struct AutoPinPolicy: Sendable {
    /// The bounds on what clients can pin (`--max-pins`, `--pin-rate`).
    public struct Limits: Sendable, Equatable {
        /// Pins held at most; the pin seen longest ago makes room for a new one.
        public var maximumPins: Int
        /// New pins one client address may make in any minute.
        public var newPinsPerClientPerMinute: Int

        public init(maximumPins: Int = 1000, newPinsPerClientPerMinute: Int = 10) {
            self.maximumPins = maximumPins
            self.newPinsPerClientPerMinute = newPinsPerClientPerMinute
        }
    }

    /// What one `record` did: the update for the flow, and the pins evicted to make room (for
    /// the caller to delete from storage).
    public struct Change: Sendable, Equatable {
        public var update: PinUpdate
        public var evicted: [PinnedDomain]

        public init(update: PinUpdate, evicted: [PinnedDomain] = []) {
            self.update = update
            self.evicted = evicted
        }

        /// The pin created or renewed, if any.
        public var changedPin: PinnedDomain? {
            switch update {
            case .pinned(let pin), .renewed(let pin): return pin
            case .unchanged, .refused: return nil
            }
        }
    }

    /// How long a pin lasts after its last failure.
    public let ttl: TimeInterval
    /// How many ambiguous EOFs within `ambiguousWindow` pin a host.
    public let ambiguousFailuresToPin: Int
    /// The window, in seconds, the ambiguous EOFs must fall into.
    public let ambiguousWindow: TimeInterval
    public let limits: Limits

    private var pins: [String: PinnedDomain] = [:]
    private var rate: PinRateLimit
    /// Times of the recent ambiguous EOFs of hosts that are not pinned.
    private var ambiguousFailures: [String: [Date]] = [:]
    /// `ambiguousFailures` is swept of stale hosts when it grows past this (amortised).
    private var ambiguousSweepThreshold = Self.minimumSweepThreshold
    private static let minimumSweepThreshold = 1024

    public init(ttl: TimeInterval, ambiguousFailuresToPin: Int = 3, ambiguousWindow: TimeInterval = 60,
                limits: Limits = Limits()) {
        precondition(ttl > 0, "a pin TTL must be positive")
        precondition(ambiguousFailuresToPin >= 1, "ambiguousFailuresToPin must be at least 1")
        precondition(limits.maximumPins >= 1, "maximumPins must be at least 1")
        self.ttl = ttl
        self.ambiguousFailuresToPin = ambiguousFailuresToPin
        self.ambiguousWindow = ambiguousWindow
        self.limits = limits
        self.rate = PinRateLimit(perMinute: limits.newPinsPerClientPerMinute)
    }

    /// Replaces every pin held with `pins` (from storage). Of two pins for one host the one
    /// seen last wins. Expired pins may be passed: they never apply. Past `maximumPins` the
    /// ones seen longest ago are dropped and returned, for the caller to delete.
    @discardableResult
    public mutating func load(_ pins: [PinnedDomain]) -> [PinnedDomain] {
        self.pins = [:]
        for pin in pins {
            let key = Self.key(pin.host)
            if let held = self.pins[key], held.lastSeen >= pin.lastSeen { continue }
            var stored = pin
            stored.host = key
            self.pins[key] = stored
        }
        guard self.pins.count > limits.maximumPins else { return [] }
        let dropped = self.pins.values.sorted { ($0.lastSeen, $0.host) < ($1.lastSeen, $1.host) }
            .prefix(self.pins.count - limits.maximumPins)
        for pin in dropped { self.pins[pin.host] = nil }
        return Array(dropped)
    }

    /// How many pins are held (expired ones until they are touched included).
    public var count: Int { pins.count }

    /// The pin that applies to `host` at `now`; nil when none does (never pinned, or expired).
    public func pin(for host: String, now: Date) -> PinnedDomain? {
        guard let pin = pins[Self.key(host)], !pin.isExpired(ttl: ttl, now: now) else { return nil }
        return pin
    }

    /// Applies one handshake outcome for `host`, seen from the client at `client` (an address,
    /// see `PinRateLimit.clientKey`), at `now`. Returns what changed, for the caller to persist.
    public mutating func record(_ outcome: HandshakeOutcome, host: String, client: String, now: Date) -> Change {
        let key = Self.key(host)
        if let held = pins[key], held.isExpired(ttl: ttl, now: now) {
            pins[key] = nil
        }
        switch outcome {
        case .completed:
            ambiguousFailures[key] = nil
            return Change(update: .unchanged)
        case .notAPinSignal:
            return Change(update: .unchanged)
        case .rejected(let reason, let evidence):
            ambiguousFailures[key] = nil
            if var pin = pins[key] {
                pin.reason = reason
                pin.evidence = evidence
                pin.lastSeen = now
                pin.count += 1
                pins[key] = pin
                return Change(update: .renewed(pin))
            }
            return add(PinnedDomain(host: key, reason: reason, evidence: evidence, firstSeen: now, lastSeen: now,
                                    count: 1), client: client, now: now)
        case .ambiguousEOF(let evidence):
            if var pin = pins[key] {
                pin.lastSeen = now
                pin.count += 1
                pins[key] = pin
                return Change(update: .renewed(pin))
            }
            return recordAmbiguousFailure(host: key, evidence: evidence, client: client, now: now)
        }
    }

    /// Adds a new pin if `client` is within its rate, evicting the pin seen longest ago when the
    /// table is full.
    private mutating func add(_ pin: PinnedDomain, client: String, now: Date) -> Change {
        guard rate.admit(client: client, now: now) else {
            return Change(update: .refused(
                "not pinned: \(PinRateLimit.clientKey(client)) made \(limits.newPinsPerClientPerMinute) new pins in the "
                    + "last minute (--pin-rate)"))
        }
        var evicted: [PinnedDomain] = []
        if pins.count >= limits.maximumPins {
            // The expired go first; then the pin seen longest ago. A scan: new pins are rare
            // (rate-limited) and the table is bounded.
            let expired = pins.values.filter { $0.isExpired(ttl: ttl, now: now) }
            let victims = expired.isEmpty
                ? pins.values.min { ($0.lastSeen, $0.host) < ($1.lastSeen, $1.host) }.map { [$0] } ?? []
                : expired
            for victim in victims { pins[victim.host] = nil }
            evicted = victims
        }
        pins[pin.host] = pin
        return Change(update: .pinned(pin), evicted: evicted)
    }

    /// Forgets the pin and the failure history of `host`. Returns the pin removed, if any.
    @discardableResult
    public mutating func remove(host: String) -> PinnedDomain? {
        let key = Self.key(host)
        ambiguousFailures[key] = nil
        return pins.removeValue(forKey: key)
    }

    /// Forgets every pin and every failure history.
    public mutating func removeAll() {
        pins = [:]
        ambiguousFailures = [:]
        ambiguousSweepThreshold = Self.minimumSweepThreshold
    }

    /// Counts an ambiguous EOF of an unpinned host; pins it when it is one too many.
    private mutating func recordAmbiguousFailure(host key: String, evidence: String, client: String,
                                                 now: Date) -> Change {
        var times = (ambiguousFailures[key] ?? []).filter { isRecent($0, now: now) }
        times.append(now)
        guard times.count >= ambiguousFailuresToPin else {
            sweepStaleAmbiguousFailures(now: now)
            // Bounded: a host with no history yet is not tracked while the table is full of recent ones.
            if ambiguousFailures[key] != nil || ambiguousFailures.count < limits.maximumPins {
                ambiguousFailures[key] = times
            }
            return Change(update: .unchanged)
        }
        ambiguousFailures[key] = nil
        return add(PinnedDomain(
            host: key,
            reason: "client closed the connection after our certificate, during the TLS handshake, \(times.count) "
                + "times within \(Int(ambiguousWindow)) s",
            evidence: evidence, firstSeen: times.min() ?? now, lastSeen: now, count: times.count), client: client, now: now)
    }

    /// True when a failure at `time` still counts at `now` (within the window, ends included).
    private func isRecent(_ time: Date, now: Date) -> Bool {
        now.timeIntervalSince(time) <= ambiguousWindow
    }

    /// Drops the histories with no recent failure once there are many, so hosts that failed once
    /// and never came back do not accumulate. Amortised: the next sweep waits until the table has
    /// doubled.
    private mutating func sweepStaleAmbiguousFailures(now: Date) {
        guard ambiguousFailures.count > min(ambiguousSweepThreshold, limits.maximumPins - 1) else { return }
        ambiguousFailures = ambiguousFailures.filter { _, times in times.contains { isRecent($0, now: now) } }
        ambiguousSweepThreshold = max(Self.minimumSweepThreshold, ambiguousFailures.count * 2)
    }

    /// How many hosts have an ambiguous-failure history held (for tests of the sweep).
    var hostsWithAmbiguousFailures: Int {
        ambiguousFailures.count
    }

    /// Pins are keyed like `PinnedDomain.host`: lowercased.
    private static func key(_ host: String) -> String {
        HostName.normalized(host)
    }
}
