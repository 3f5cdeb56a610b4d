import NIOCore

/// Idle upstream HTTP connections kept for reuse, per origin, for one event loop.
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
    }

    private struct Entry {
        var channel: any Channel
        var handler: UpstreamHTTPHandler
    }

    private var idle: [Key: [Entry]] = [:]
    private let maxIdlePerKey: Int

    init(maxIdlePerKey: Int) {
        self.maxIdlePerKey = maxIdlePerKey
    }

    /// An idle, still-open connection to `key`, most recently used first.
    func checkout(_ key: Key) -> (any Channel, UpstreamHTTPHandler)? {
        // Mutate in place (no copy of the array, and an emptied list keeps its storage for the
        // next check-in: origins are reused constantly under load).
        while let entry = idle[key]?.popLast() {
            entry.handler.onIdleClose = nil
            if entry.channel.isActive {
                return (entry.channel, entry.handler)
            }
        }
        return nil
    }

    /// Keeps a connection whose last exchange completed cleanly; closes it when the pool for
    /// that origin is full.
    func checkin(_ key: Key, channel: any Channel, handler: UpstreamHTTPHandler) {
        handler.delegate = nil
        handler.resumeReads()
        guard channel.isActive, (idle[key]?.count ?? 0) < maxIdlePerKey else {
            channel.close(promise: nil)
            return
        }
        if idle.count > 1024 {
            idle = idle.filter { !$0.value.isEmpty }  // forget origins with nothing pooled
        }
        // Strong on purpose: the pool outlives its connections (weak references are slow).
        handler.onIdleClose = { self.remove(key, channel: channel) }
        idle[key, default: []].append(Entry(channel: channel, handler: handler))
    }

    /// How many idle connections are held (all origins).
    var idleCount: Int {
        idle.values.reduce(0) { $0 + $1.count }
    }

    private func remove(_ key: Key, channel: any Channel) {
        idle[key]?.removeAll { $0.channel === channel }
    }
}
