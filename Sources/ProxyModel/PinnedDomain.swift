import Foundation

/// A host whose clients refuse our minted certificates (certificate pinning, or a client with its
/// own trust store), so the proxy passes its tunnels through untouched instead of intercepting.
///
/// It exists so a pinned app keeps working: after its client rejects our certificate once, its
/// next connections are relayed as opaque bytes. A pin remembers why it was made (shown to the
/// user) and expires `ttl` after the last failure, so the host is tried again eventually (the app
/// may have been updated, or the user may have installed the CA in it).
public struct PinnedDomain: Sendable, Hashable {
    /// The host name, lowercased.
    public var host: String
    /// Why the host was pinned, in one line: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)".
    public var reason: String
    /// The raw error text the decision was based on, for whoever needs to check it.
    public var evidence: String
    /// When the first failure that led to the pin was seen.
    public var firstSeen: Date
    /// When the latest failure was seen; the pin expires `ttl` after it.
    public var lastSeen: Date
    /// How many handshake failures were seen for this host while it was (being) pinned.
    public var count: Int

    public init(host: String, reason: String, evidence: String, firstSeen: Date, lastSeen: Date, count: Int) {
        self.host = host.lowercased()
        self.reason = reason
        self.evidence = evidence
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
    }

    /// When the pin stops applying: `lastSeen + ttl`.
    public func expiry(ttl: TimeInterval) -> Date {
        lastSeen.addingTimeInterval(ttl)
    }

    /// True once `ttl` has passed since the last failure (`lastSeen + ttl <= now`).
    public func isExpired(ttl: TimeInterval, now: Date) -> Bool {
        expiry(ttl: ttl) <= now
    }
}
