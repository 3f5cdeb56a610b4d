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
/// - another failure of a pinned host updates the pin's `lastSeen` and `count`.
/// Hosts compare as `HostName.normalized` forms (case, a trailing dot, IDN and IPv6 spellings
/// do not matter), the same form every host pattern matches against.
public struct AutoPinPolicy: Sendable {
    /// How long a pin lasts after its last failure.
    public let ttl: TimeInterval
    /// How many ambiguous EOFs within `ambiguousWindow` pin a host.
    public let ambiguousFailuresToPin: Int
    /// The window, in seconds, the ambiguous EOFs must fall into.
    public let ambiguousWindow: TimeInterval

    private var pins: [String: PinnedDomain] = [:]
    /// Times of the recent ambiguous EOFs of hosts that are not pinned.
    private var ambiguousFailures: [String: [Date]] = [:]
    /// `ambiguousFailures` is swept of stale hosts when it grows past this (amortised).
    private var ambiguousSweepThreshold = Self.minimumSweepThreshold
    private static let minimumSweepThreshold = 1024

    public init(ttl: TimeInterval, ambiguousFailuresToPin: Int = 3, ambiguousWindow: TimeInterval = 60) {
        precondition(ttl > 0, "a pin TTL must be positive")
        precondition(ambiguousFailuresToPin >= 1, "ambiguousFailuresToPin must be at least 1")
        self.ttl = ttl
        self.ambiguousFailuresToPin = ambiguousFailuresToPin
        self.ambiguousWindow = ambiguousWindow
    }

    /// Replaces every pin held with `pins` (from storage). Of two pins for one host the one
    /// seen last wins. Expired pins may be passed: they never apply.
    public mutating func load(_ pins: [PinnedDomain]) {
        self.pins = [:]
        for pin in pins {
            let key = Self.key(pin.host)
            if let held = self.pins[key], held.lastSeen >= pin.lastSeen { continue }
            var stored = pin
            stored.host = key
            self.pins[key] = stored
        }
    }

    /// The pin that applies to `host` at `now`; nil when none does (never pinned, or expired).
    public func pin(for host: String, now: Date) -> PinnedDomain? {
        guard let pin = pins[Self.key(host)], !pin.isExpired(ttl: ttl, now: now) else { return nil }
        return pin
    }

    /// Applies one handshake outcome for `host` at `now`. Returns the pin that was created or
    /// updated, for the caller to persist; nil when no pin changed.
    public mutating func record(_ outcome: HandshakeOutcome, host: String, now: Date) -> PinnedDomain? {
        let key = Self.key(host)
        if let held = pins[key], held.isExpired(ttl: ttl, now: now) {
            pins[key] = nil
        }
        switch outcome {
        case .completed:
            ambiguousFailures[key] = nil
            return nil
        case .notAPinSignal:
            return nil
        case .rejected(let reason, let evidence):
            ambiguousFailures[key] = nil
            var pin = pins[key] ?? PinnedDomain(host: key, reason: reason, evidence: evidence, firstSeen: now,
                                                lastSeen: now, count: 0)
            pin.reason = reason
            pin.evidence = evidence
            pin.lastSeen = now
            pin.count += 1
            pins[key] = pin
            return pin
        case .ambiguousEOF(let evidence):
            if var pin = pins[key] {
                pin.lastSeen = now
                pin.count += 1
                pins[key] = pin
                return pin
            }
            return recordAmbiguousFailure(host: key, evidence: evidence, now: now)
        }
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
    private mutating func recordAmbiguousFailure(host key: String, evidence: String, now: Date) -> PinnedDomain? {
        var times = (ambiguousFailures[key] ?? []).filter { isRecent($0, now: now) }
        times.append(now)
        guard times.count >= ambiguousFailuresToPin else {
            ambiguousFailures[key] = times
            sweepStaleAmbiguousFailures(now: now)
            return nil
        }
        ambiguousFailures[key] = nil
        let pin = PinnedDomain(
            host: key,
            reason: "client closed the connection during the TLS handshake \(times.count) times within "
                + "\(Int(ambiguousWindow)) s",
            evidence: evidence, firstSeen: times.min() ?? now, lastSeen: now, count: times.count)
        pins[key] = pin
        return pin
    }

    /// True when a failure at `time` still counts at `now` (within the window, ends included).
    private func isRecent(_ time: Date, now: Date) -> Bool {
        now.timeIntervalSince(time) <= ambiguousWindow
    }

    /// Drops the histories with no recent failure once there are many, so hosts that failed once
    /// and never came back do not accumulate. Amortised: the next sweep waits until the table has
    /// doubled.
    private mutating func sweepStaleAmbiguousFailures(now: Date) {
        guard ambiguousFailures.count > ambiguousSweepThreshold else { return }
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
