import Foundation
import ProxyModel

/// Decides which hosts to stop intercepting for which client, from the outcomes of TLS
/// handshakes with clients.
///
/// A client that pins its server's certificate (or trusts only its own roots) refuses every
/// certificate we mint for that host; intercepting it again and again just breaks the app. But a
/// client that refuses our certificate may simply not trust the CA *yet* (the user's first
/// `curl` before installing it): pinning then would trap the user. So the rules, kept here
/// without I/O, locks or clocks (the caller passes `now`) so they are tested alone:
/// - a client (`ClientIdentity`: address + ClientHello fingerprint) is *trusted* once it has
///   completed a handshake with us, on any host (`TrustedClients`, bounded);
/// - pins are per client and host: a refusal pins the host for that client only;
/// - an explicit rejection (`.rejected`) by a trusted client pins at once; an ambiguous EOF pins
///   only after `ambiguousFailuresToPin` of them from the client within `ambiguousWindow` seconds
///   with no completed handshake for the host in between (a client that simply went away looks
///   the same once);
/// - a refusal by a client that is not trusted pins nothing: `.untrustedClient`, for the flow's
///   note to tell the user to install the CA;
/// - `.completed` clears the client's ambiguous history for the host; `.notAPinSignal` changes
///   nothing;
/// - a pin expires `ttl` seconds after its last failure, and is then dropped: the host is
///   intercepted again for the client, and pinned again if it still refuses;
/// - another failure of a pinned host updates the pin's `lastSeen` and `count` (a renewal);
/// - bounds, because a client chooses what it rejects (and can change its fingerprint at will):
///   at most `limits.maximumPins` pins are held (a new one evicts the pin seen longest ago), and
///   one client address makes at most `limits.newPinsPerClientPerMinute` new pins a minute
///   (`PinRateLimit`, by address whatever the fingerprint); an outcome over the rate is
///   `.refused`, and the host stays intercepted. At most `limits.maximumPins` (client, host)
///   pairs have an ambiguous-failure history at once.
/// Pins with no client (stored before pins were per client) apply to every client.
/// Hosts compare as `HostName.normalized` forms (case, a trailing dot, IDN and IPv6 spellings
/// do not matter), the same form every host pattern matches against.
public struct AutoPinPolicy: Sendable {
    /// The bounds on what clients can pin (`--max-pins`, `--pin-rate`).
    public struct Limits: Sendable, Equatable {
        /// Pins held at most; the pin seen longest ago makes room for a new one.
        public var maximumPins: Int
        /// New pins one client address may make in any minute.
        public var newPinsPerClientPerMinute: Int
        /// Trusted clients remembered at most (`TrustedClients`).
        public var trustedClients: Int

        public init(maximumPins: Int = 1000, newPinsPerClientPerMinute: Int = 10, trustedClients: Int = 4096) {
            self.maximumPins = maximumPins
            self.newPinsPerClientPerMinute = newPinsPerClientPerMinute
            self.trustedClients = trustedClients
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
            case .unchanged, .refused, .untrustedClient: return nil
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

    private typealias Key = PinnedDomain.Key

    private var pins: [Key: PinnedDomain] = [:]
    private var rate: PinRateLimit
    private var trusted: TrustedClients
    /// Times of the recent ambiguous EOFs of (client, host) pairs that are not pinned.
    private var ambiguousFailures: [Key: [Date]] = [:]
    /// `ambiguousFailures` is swept of stale pairs when it grows past this (amortised).
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
        self.trusted = TrustedClients(capacity: max(2, limits.trustedClients))
    }

    /// Replaces every pin held with `pins` (from storage). Of two pins for one host and client
    /// the one seen last wins. Expired pins may be passed: they never apply. Past `maximumPins`
    /// the ones seen longest ago are dropped and returned, for the caller to delete. The
    /// clients of the pins are trusted: they refused our certificate while trusted.
    @discardableResult
    public mutating func load(_ pins: [PinnedDomain]) -> [PinnedDomain] {
        self.pins = [:]
        for pin in pins {
            var stored = pin
            stored.host = Self.normalized(pin.host)
            if let held = self.pins[stored.key], held.lastSeen >= pin.lastSeen { continue }
            self.pins[stored.key] = stored
            if let client = pin.client { trusted.insert(client) }
        }
        guard self.pins.count > limits.maximumPins else { return [] }
        let dropped = self.pins.values.sorted(by: Self.seenEarlier).prefix(self.pins.count - limits.maximumPins)
        for pin in dropped { self.pins[pin.key] = nil }
        return Array(dropped)
    }

    /// How many pins are held (expired ones until they are touched included).
    public var count: Int { pins.count }

    /// Whether `client` has completed a handshake with the proxy (as far as the bounded memory goes).
    public func isTrusted(_ client: ClientIdentity) -> Bool {
        trusted.contains(client)
    }

    /// The pin that applies to `client` going to `host` at `now`: its own, else one for every
    /// client; nil when none does (never pinned, or expired).
    public func pin(for host: String, client: ClientIdentity, now: Date) -> PinnedDomain? {
        let host = Self.normalized(host)
        for key in [Key(host: host, client: client), Key(host: host, client: nil)] {
            if let pin = pins[key], !pin.isExpired(ttl: ttl, now: now) { return pin }
        }
        return nil
    }

    /// Every live pin for `host`, whatever the client, by client.
    public func pins(for host: String, now: Date) -> [PinnedDomain] {
        let host = Self.normalized(host)
        return pins.values.filter { $0.host == host && !$0.isExpired(ttl: ttl, now: now) }.sorted {
            $0.clientText < $1.clientText
        }
    }

    /// Applies one handshake outcome for `client` going to `host`, at `now`; `tlsVersion` is kept
    /// on the pin as evidence. Returns what changed, for the caller to persist.
    public mutating func record(_ outcome: HandshakeOutcome, host: String, client: ClientIdentity,
                                tlsVersion: String? = nil, now: Date) -> Change {
        let key = Key(host: Self.normalized(host), client: client)
        if let held = pins[key], held.isExpired(ttl: ttl, now: now) {
            pins[key] = nil
        }
        switch outcome {
        case .completed:
            trusted.insert(client)
            ambiguousFailures[key] = nil
            return Change(update: .unchanged)
        case .notAPinSignal:
            return Change(update: .unchanged)
        case .rejected(let reason, let evidence, let alert):
            ambiguousFailures[key] = nil
            if var pin = pins[key] {
                pin.reason = reason
                pin.evidence = evidence
                pin.alert = alert
                pin.tlsVersion = tlsVersion ?? pin.tlsVersion
                return renew(&pin, now: now)
            }
            guard trusted.contains(client) else { return Change(update: .untrustedClient) }
            return add(PinnedDomain(host: key.host, reason: reason, evidence: evidence, firstSeen: now, lastSeen: now,
                                    count: 1, client: client, alert: alert, tlsVersion: tlsVersion), now: now)
        case .ambiguousEOF(let evidence):
            if var pin = pins[key] {
                return renew(&pin, now: now)
            }
            guard trusted.contains(client) else { return Change(update: .untrustedClient) }
            return recordAmbiguousFailure(key, evidence: evidence, tlsVersion: tlsVersion, now: now)
        }
    }

    private mutating func renew(_ pin: inout PinnedDomain, now: Date) -> Change {
        pin.lastSeen = now
        pin.count += 1
        pins[pin.key] = pin
        return Change(update: .renewed(pin))
    }

    /// Adds a new pin if its client's address is within its rate, evicting the pin seen longest
    /// ago when the table is full.
    private mutating func add(_ pin: PinnedDomain, now: Date) -> Change {
        let address = pin.client?.address ?? ""
        guard rate.admit(client: address, now: now) else {
            return Change(update: .refused(
                "not pinned: \(PinRateLimit.clientKey(address)) made \(limits.newPinsPerClientPerMinute) new pins in the "
                    + "last minute (--pin-rate)"))
        }
        var evicted: [PinnedDomain] = []
        if pins.count >= limits.maximumPins {
            // The expired go first; then the pin seen longest ago. A scan: new pins are rare
            // (rate-limited) and the table is bounded.
            let expired = pins.values.filter { $0.isExpired(ttl: ttl, now: now) }
            let victims = expired.isEmpty ? pins.values.min(by: Self.seenEarlier).map { [$0] } ?? [] : expired
            for victim in victims { pins[victim.key] = nil }
            evicted = victims
        }
        pins[pin.key] = pin
        return Change(update: .pinned(pin), evicted: evicted)
    }

    /// Forgets the pins of `host` for every client, and their failure histories. Returns the
    /// pins removed.
    @discardableResult
    public mutating func remove(host: String) -> [PinnedDomain] {
        let host = Self.normalized(host)
        ambiguousFailures = ambiguousFailures.filter { $0.key.host != host }
        let removed = pins.values.filter { $0.host == host }
        for pin in removed { pins[pin.key] = nil }
        return removed
    }

    /// Forgets every pin and every failure history (not which clients are trusted).
    public mutating func removeAll() {
        pins = [:]
        ambiguousFailures = [:]
        ambiguousSweepThreshold = Self.minimumSweepThreshold
    }

    /// Counts an ambiguous EOF of an unpinned (client, host); pins when it is one too many.
    private mutating func recordAmbiguousFailure(_ key: Key, evidence: String, tlsVersion: String?, now: Date) -> Change {
        var times = (ambiguousFailures[key] ?? []).filter { isRecent($0, now: now) }
        times.append(now)
        guard times.count >= ambiguousFailuresToPin else {
            sweepStaleAmbiguousFailures(now: now)
            // Bounded: a pair with no history yet is not tracked while the table is full of recent ones.
            if ambiguousFailures[key] != nil || ambiguousFailures.count < limits.maximumPins {
                ambiguousFailures[key] = times
            }
            return Change(update: .unchanged)
        }
        ambiguousFailures[key] = nil
        return add(PinnedDomain(
            host: key.host,
            reason: "client closed the connection after our certificate, during the TLS handshake, \(times.count) "
                + "times within \(Int(ambiguousWindow)) s",
            evidence: evidence, firstSeen: times.min() ?? now, lastSeen: now, count: times.count, client: key.client,
            tlsVersion: tlsVersion), now: now)
    }

    /// True when a failure at `time` still counts at `now` (within the window, ends included).
    private func isRecent(_ time: Date, now: Date) -> Bool {
        now.timeIntervalSince(time) <= ambiguousWindow
    }

    /// Drops the histories with no recent failure once there are many, so pairs that failed once
    /// and never came back do not accumulate. Amortised: the next sweep waits until the table has
    /// doubled.
    private mutating func sweepStaleAmbiguousFailures(now: Date) {
        guard ambiguousFailures.count > min(ambiguousSweepThreshold, limits.maximumPins - 1) else { return }
        ambiguousFailures = ambiguousFailures.filter { _, times in times.contains { isRecent($0, now: now) } }
        ambiguousSweepThreshold = max(Self.minimumSweepThreshold, ambiguousFailures.count * 2)
    }

    /// How many (client, host) pairs have an ambiguous-failure history held (for tests of the sweep).
    var hostsWithAmbiguousFailures: Int {
        ambiguousFailures.count
    }

    /// How many clients are remembered as trusted (for tests of the bound).
    var trustedClientCount: Int {
        trusted.count
    }

    /// The order pins are evicted in: seen longest ago first, then by host and client.
    private static func seenEarlier(_ lhs: PinnedDomain, _ rhs: PinnedDomain) -> Bool {
        (lhs.lastSeen, lhs.host, lhs.clientText) < (rhs.lastSeen, rhs.host, rhs.clientText)
    }

    /// Pins are keyed like `PinnedDomain.host`: lowercased.
    private static func normalized(_ host: String) -> String {
        HostName.normalized(host)
    }
}
