import NIOConcurrencyHelpers
import NIOSSL
import ProxyCore
import ProxyTLS

/// The TLS server contexts intercepted handshakes present: one per leaf, minimum client version
/// and ALPN list, shared by the connections that present that leaf.
///
/// Why: a context is BoringSSL's `SSL_CTX`, built from a whole configuration (cipher lists, the
/// chain, the key) and freed again, about 15 µs. Built for every connection, that was 2.6 % of
/// the proxy's CPU in the bench's new-connection phase (about 1,200 HTTPS connections a second),
/// and NIOSSL keeps each connection's context alive through its shutdown timer: that phase's
/// peak RSS was 46 MiB, 36 with shared contexts. A shared context also lets a returning client
/// resume its TLS session (a TLS 1.3 ticket, a TLS 1.2 session id) and skip the certificate and
/// its signature: a context of its own per connection had a ticket key no later connection knew.
///
/// Bounds, stated:
/// - at most `capacity` contexts (64), the least recently used forgotten first; a connection
///   still using a forgotten context keeps it until it closes;
/// - a context serves `handshakesPerContext` (256) connections, then a fresh one replaces it.
///   BoringSSL keeps the session of every full TLS 1.2 handshake in its context (up to 20,480,
///   for two hours), so a context used for ever would grow with its TLS 1.2 clients; replaced,
///   it holds at most 256 (a few hundred bytes each). Tickets issued by the old context are not
///   accepted by the new one: those clients make one full handshake more.
///
/// A leaf is told apart by its certificate and key objects (`===`), which the entry holds, so no
/// other certificate can take their address while the entry exists: a leaf minted again
/// (renewal, a regenerated CA) gets contexts of its own.
public final class ServerContextCache: Sendable {
    public static let defaultCapacity = 64
    public static let defaultHandshakesPerContext = 256

    private struct Key: Hashable {
        var certificate: ObjectIdentifier
        var privateKey: ObjectIdentifier
        var minimumVersion: TLSProtocolVersion
        var protocols: [String]
    }

    private struct Entry {
        var context: NIOSSLContext
        /// Held so that the identifiers in the key stay theirs.
        var identity: ServerIdentity
        var handshakesLeft: Int
    }

    private let entries: NIOLockedValueBox<LeastRecentlyUsedCache<Key, Entry>>
    private let handshakesPerContext: Int
    private let makeContext: @Sendable (ServerIdentity, TLSProtocolVersion, [String]) throws -> NIOSSLContext

    public convenience init(capacity: Int = defaultCapacity, handshakesPerContext: Int = defaultHandshakesPerContext) {
        self.init(capacity: capacity, handshakesPerContext: handshakesPerContext) {
            try TLSInterception.serverContext(for: $0, minimumVersion: $1, protocols: $2)
        }
    }

    /// For tests: any builder (to count the contexts built).
    init(capacity: Int, handshakesPerContext: Int,
         makeContext: @escaping @Sendable (ServerIdentity, TLSProtocolVersion, [String]) throws -> NIOSSLContext) {
        precondition(handshakesPerContext > 0, "a context must serve at least one handshake")
        entries = NIOLockedValueBox(LeastRecentlyUsedCache(capacity: capacity))
        self.handshakesPerContext = handshakesPerContext
        self.makeContext = makeContext
    }

    /// How many contexts are kept.
    public var count: Int { entries.withLockedValue { $0.count } }

    /// The context for one handshake presenting `identity` to clients of at least
    /// `minimumVersion`, agreeing on `protocols` (an identity without a certificate gets a context
    /// of its own, never kept). A miss builds the context under the lock (about 15 µs, once per
    /// 256 handshakes), so two connections never build the same one twice.
    public func context(for identity: ServerIdentity, minimumVersion: TLSProtocolVersion,
                        protocols: [String]) throws -> NIOSSLContext {
        guard let certificate = identity.certificateChain.first else {
            return try makeContext(identity, minimumVersion, protocols)
        }
        let key = Key(certificate: ObjectIdentifier(certificate), privateKey: ObjectIdentifier(identity.privateKey),
                      minimumVersion: minimumVersion, protocols: protocols)
        return try entries.withLockedValue { entries in
            if var entry = entries.value(for: key), entry.handshakesLeft > 0 {
                entry.handshakesLeft -= 1
                entries.insert(entry, for: key)
                return entry.context
            }
            let context = try makeContext(identity, minimumVersion, protocols)
            entries.insert(Entry(context: context, identity: identity, handshakesLeft: handshakesPerContext - 1), for: key)
            return context
        }
    }
}
