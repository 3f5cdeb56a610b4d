/// How long each phase of an exchange took, in milliseconds, HAR-style.
///
/// A phase that did not happen (no DNS lookup on a reused connection, no TLS on plain HTTP) is
/// `-1`, never `0`, so "instant" and "not applicable" stay distinguishable.
///
/// `hold` is the time the exchange waited at a breakpoint for a person (both sides summed); it is
/// not counted in `send` or `wait`, so the phases still add up to what the network took.
public struct FlowTimings: Sendable, Hashable {
    public static let notApplicable: Double = -1

    public var dns: Double
    public var connect: Double
    public var tls: Double
    public var send: Double
    public var wait: Double
    public var receive: Double
    public var hold: Double

    public init(
        dns: Double = notApplicable, connect: Double = notApplicable, tls: Double = notApplicable,
        send: Double = notApplicable, wait: Double = notApplicable, receive: Double = notApplicable,
        hold: Double = notApplicable
    ) {
        self.hold = hold
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.send = send
        self.wait = wait
        self.receive = receive
    }
}
