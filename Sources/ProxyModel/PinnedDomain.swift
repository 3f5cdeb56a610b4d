import Foundation

/// A host one client refuses our minted certificates for (certificate pinning, or its own trust
/// store), so the proxy passes that client's tunnels to the host through untouched.
///
/// It exists so a pinned app keeps working: after it rejects our certificate once, its next
/// connections to the host are relayed as opaque bytes, while other clients (a browser that
/// trusts the CA) are still intercepted there. A pin remembers why it was made (shown to the
/// user) and expires `ttl` after the last failure, so the host is tried again eventually (the app
/// may have been updated, or the user may have installed the CA in it).
public struct PinnedDomain: Sendable, Hashable {
    /// What a pin is stored and looked up by: one per host and client.
    public struct Key: Sendable, Hashable {
        /// `HostName.normalized`, as `PinnedDomain.host`.
        public var host: String
        /// Nil: every client (pins made before pins were per client, schema v6).
        public var client: ClientIdentity?

        public init(host: String, client: ClientIdentity?) {
            self.host = host
            self.client = client
        }
    }

    /// The host name, lowercased.
    public var host: String
    /// The client that refused our certificate; nil for a pin that applies to every client
    /// (the pins stored before schema v6, which knew no clients).
    public var client: ClientIdentity?
    /// The alert the client sent (`unknown_ca`, `bad_certificate`, …); nil when it closed the
    /// connection without one.
    public var alert: String?
    /// The TLS version of the refused handshake (`TLS 1.3`), when known.
    public var tlsVersion: String?
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

    public init(host: String, reason: String, evidence: String, firstSeen: Date, lastSeen: Date, count: Int,
                client: ClientIdentity? = nil, alert: String? = nil, tlsVersion: String? = nil) {
        self.host = host.lowercased()
        self.reason = reason
        self.evidence = evidence
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
        self.client = client
        self.alert = alert
        self.tlsVersion = tlsVersion
    }

    public var key: Key { Key(host: host, client: client) }

    /// The client in words: `127.0.0.1 t131513h2_…`, or `any client`.
    public var clientText: String { client?.description ?? "any client" }

    /// How a user undoes the pin, for the notes of the flows it affects.
    public var undoHint: String { "to undo: `p` in the TUI, or `proxyapp pins remove \(host)`" }

    /// When the pin stops applying: `lastSeen + ttl`.
    public func expiry(ttl: TimeInterval) -> Date {
        lastSeen.addingTimeInterval(ttl)
    }

    /// True once `ttl` has passed since the last failure (`lastSeen + ttl <= now`).
    public func isExpired(ttl: TimeInterval, now: Date) -> Bool {
        expiry(ttl: ttl) <= now
    }
}
