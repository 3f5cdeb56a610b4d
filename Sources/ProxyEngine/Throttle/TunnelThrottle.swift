import NIOCore
import ProxyCore
import ProxyModel
import Rules

/// A throttle on a byte tunnel (a CONNECT not decrypted, a SOCKS5 connection, a relay after the
/// first bytes): decided by host and port alone — a throttle rule that needs nothing else, else
/// `--throttle` — and carried out around the dial: the latency first (a new connection), then the
/// origin's reads paced to the download rate and the client's to the upload rate.
enum TunnelThrottle {
    /// The throttle for a tunnel to `host`:`port` (normalized host), named on `flow` as it acts.
    static func profile(host: String, port: Int, rules: RuleSet, configuration: ProxyConfiguration,
                        recordingOn flow: inout Flow) -> ThrottleProfile? {
        if let rule = rules.throttleForConnect(host: host, port: port) {
            flow.appliedRules.append(rule.name)
            return rule.action.isNone ? nil : rule.action  // `throttle: off`
        }
        guard let global = configuration.throttle else { return nil }
        flow.appliedRules.append(RequestRouting.globalThrottleName)
        return global
    }

    /// `dial`, throttled by `profile` (nil: as it is) for the client on `client`.
    static func dial(_ profile: ThrottleProfile?, client: any Channel,
                     _ dial: @escaping () -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>)
        -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        guard let profile else { return dial() }
        let loop = client.eventLoop
        let dialled = profile.latencyMilliseconds > 0
            ? loop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(profile.latencyMilliseconds))) { dial() }
                .futureResult.flatMap { $0 }
            : dial()
        return dialled.map { connected in
            if profile.downBytesPerSecond != nil {
                ThrottledReads.pace(connected.0, bytesPerSecond: profile.downBytesPerSecond, closesOnEndOfInput: false)
            }
            if profile.upBytesPerSecond != nil, client.isActive {
                ThrottledReads.pace(client, bytesPerSecond: profile.upBytesPerSecond, closesOnEndOfInput: false)
            }
            return connected
        }
    }
}
