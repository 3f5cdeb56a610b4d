import ProxyModel

/// HAR `timings` → `FlowTimings`, inverting the export's convention.
///
/// HAR's `connect` includes `ssl`; the engine records TCP connect and the TLS handshake apart
/// (`ExchangeRecorder`: `connect`, `tls`). So our connect is HAR connect − ssl when both are
/// known. Absent or negative phases are -1 (not applicable); `blocked` has no counterpart (it is
/// queueing in other tools), our `_hold` is the time held at a breakpoint.
enum HARTimingsMapping {
    static func flowTimings(_ timings: HARInput.Timings?) -> FlowTimings {
        guard let timings else { return FlowTimings() }
        let ssl = phase(timings.ssl)
        var connect = phase(timings.connect)
        if connect >= 0 && ssl >= 0 { connect = max(0, connect - ssl) }
        return FlowTimings(dns: phase(timings.dns), connect: connect, tls: ssl, send: phase(timings.send),
                           wait: phase(timings.wait), receive: phase(timings.receive), hold: phase(timings.hold))
    }

    private static func phase(_ value: Double?) -> Double {
        guard let value, value.isFinite, value >= 0 else { return FlowTimings.notApplicable }
        return value
    }
}
