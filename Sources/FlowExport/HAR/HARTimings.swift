import ProxyModel

/// A flow's timing phases as HAR 1.2 defines them, in whole microseconds so that `time`, their
/// sum, is exact when written with three decimals.
///
/// Our `FlowTimings.connect` is the TCP connect alone and `tls` the handshake after it; HAR's
/// `connect` includes `ssl`, so it is their sum here. `send`, `wait` and `receive` are required
/// and non-negative in HAR: a phase that did not happen is 0 there. `blocked` is the time held at
/// a breakpoint (HAR: waiting before the request could go on), -1 when it was not held; the
/// writer repeats it as `_hold`, which the import reads (another tool's `blocked` is queueing,
/// not a hold). When no network phase was measured but the flow has a duration, the duration
/// (less any hold) is `wait`;
/// for tunnels the lifetime after connecting is `receive` (the time bytes were relayed).
struct HARTimings {
    static let notApplicable: Int64 = -1

    let blocked: Int64
    let dns: Int64
    let connect: Int64
    let ssl: Int64
    let send: Int64
    let wait: Int64
    let receive: Int64

    /// `time` of the entry: the sum of the non-negative phases, `ssl` excluded (it is in `connect`).
    var total: Int64 {
        [blocked, dns, connect, send, wait, receive].reduce(0) { $0 + max($1, 0) }
    }

    init(_ flow: Flow) {
        let timings = flow.timings
        let dns = Self.microseconds(timings.dns)
        let tcp = Self.microseconds(timings.connect)
        let ssl = Self.microseconds(timings.tls)
        let held = Self.microseconds(timings.hold)
        blocked = held
        self.dns = dns
        self.ssl = ssl
        switch (tcp >= 0, ssl >= 0) {
        case (true, true): connect = tcp + ssl
        case (true, false): connect = tcp
        case (false, true): connect = ssl
        case (false, false): connect = Self.notApplicable
        }
        let send = max(Self.microseconds(timings.send), 0)
        var wait = max(Self.microseconds(timings.wait), 0)
        var receive = max(Self.microseconds(timings.receive), 0)
        let duration = flow.durationMilliseconds.map(Self.microseconds) ?? Self.notApplicable
        let measured = [timings.dns, timings.connect, timings.tls, timings.send, timings.wait, timings.receive]
            .contains { Self.microseconds($0) >= 0 }
        if flow.kind == .tunnel, duration >= 0 {
            receive = max(duration - max(dns, 0) - max(connect, 0) - send - wait, 0)
        } else if !measured, duration >= 0 {
            wait = max(duration - max(held, 0), 0)  // the hold is `blocked` already
        }
        (self.send, self.wait, self.receive) = (send, wait, receive)
    }

    /// Milliseconds as whole microseconds; -1 for anything negative or not finite.
    static func microseconds(_ milliseconds: Double) -> Int64 {
        guard milliseconds.isFinite, milliseconds >= 0 else { return notApplicable }
        return Int64((min(milliseconds, 1e12) * 1000).rounded())
    }
}
