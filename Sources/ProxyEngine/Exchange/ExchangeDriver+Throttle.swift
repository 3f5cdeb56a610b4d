import NIOCore
import ProxyCore

/// A throttled exchange (`ThrottleProfile`, from a throttle rule or `--throttle`, in `key`):
/// its latency before the request goes out and again before a new connection is used, its
/// download pace on the origin's connection and its upload pace on the client's.
extension ExchangeDriver {
    /// `openUpstream`, after the throttle's latency when one applies. Client reads pause
    /// meanwhile (as while connecting); an exchange that ended during the wait opens nothing.
    func openUpstreamAfterLatency(allowReuse: Bool) {
        client.paceUploads(bytesPerSecond: key.throttle?.upBytesPerSecond, isStream: clientVersion.major >= 2)
        guard let latency = key.throttle?.latencyMilliseconds, latency > 0 else {
            openUpstream(allowReuse: allowReuse)
            return
        }
        perform(machine.upstreamConnecting())
        client.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(latency))) {
            guard self.machine.phase == .forwarding else { return }
            self.openUpstream(allowReuse: allowReuse)
        }
    }

    /// Runs `use` once a new connection may carry the exchange: with a throttle, its reads are
    /// paced from now on and the latency passes first (a new connection costs a round trip more).
    func afterNewConnection(_ channel: (any Channel)?, _ use: @escaping () -> Void) {
        guard let throttle = key.throttle else {
            use()
            return
        }
        if let channel, throttle.downBytesPerSecond != nil {
            ThrottledReads.pace(channel, bytesPerSecond: throttle.downBytesPerSecond, closesOnEndOfInput: true)
        }
        guard throttle.latencyMilliseconds > 0 else {
            use()
            return
        }
        client.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(throttle.latencyMilliseconds))) { use() }
    }
}
