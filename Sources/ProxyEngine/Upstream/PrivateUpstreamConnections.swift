import NIOCore

/// Upstream connections that belong to one client connection: those an origin bound to a login
/// (`ConnectionBoundAuth`: NTLM, Negotiate). They never enter the shared
/// `UpstreamConnectionPool`; the client's next request to the same origin takes its own one back,
/// and they close with the client connection.
///
/// Owned by `ClientHTTPHandler`; only its event loop touches it.
final class PrivateUpstreamConnections {
    private var idle: [UpstreamConnectionPool.Key: (channel: any Channel, handler: UpstreamHTTPHandler)] = [:]
    /// The client connection ended: a connection handed back later is closed, not kept.
    private var isClosed = false

    /// This client's idle connection to `key`, if it has one that is still open.
    func checkout(_ key: UpstreamConnectionPool.Key) -> (any Channel, UpstreamHTTPHandler)? {
        guard let entry = idle.removeValue(forKey: key) else { return nil }
        entry.handler.onIdleClose = nil
        return entry.channel.isActive ? (entry.channel, entry.handler) : nil
    }

    /// Keeps a connection for this client only; one per origin (a second closes the first).
    func checkin(_ key: UpstreamConnectionPool.Key, channel: any Channel, handler: UpstreamHTTPHandler) {
        handler.detach()
        handler.resumeReads()
        guard channel.isActive, !isClosed else {
            channel.close(promise: nil)
            return
        }
        if let previous = idle.removeValue(forKey: key), previous.channel !== channel {
            previous.handler.onIdleClose = nil
            previous.channel.close(promise: nil)
        }
        handler.onIdleClose = { [weak self] in
            if self?.idle[key]?.channel === channel { self?.idle[key] = nil }
        }
        idle[key] = (channel, handler)
    }

    /// How many are held.
    var count: Int { idle.count }

    /// The client connection ended: its private connections end too.
    func closeAll() {
        isClosed = true
        let entries = idle.values
        idle.removeAll()
        for entry in entries {
            entry.handler.onIdleClose = nil
            entry.channel.close(promise: nil)
        }
    }
}
