/// What a replay's in-process connection asks of the client pipeline (`ClientHTTPHandler.replay`).
///
/// A replay is an exchange with no client connection of its own: `FlowReplayer` opens a socket
/// pair inside the process and puts the usual client pipeline on one end, so a replayed request
/// takes exactly the path a client's does (framing, rules, upstream pool and TLS, capture) —
/// except what only a person at this machine may ask: no login, any `http://`/`https://` URL
/// directly, and the link to the original flow.
struct ReplaySettings: Sendable {
    /// `--no-rules`: forwarded as it is, no rule consulted.
    var ignoresRules: Bool

    /// What the flow list shows as the client of a replayed exchange.
    static let clientAddress = "replay"

    /// The original flow's id, sent by `FlowReplayer` on its own connection only (nowhere else is
    /// it read) and removed before forwarding.
    static let originalHeader = "x-proxyapp-replay-of"
}
