/// Decides when a fresh CONNECT tunnel stops waiting for the client's first bytes, by which side
/// speaks first instead of by a fixed timer. Pure: `InterceptedTunnel` feeds it events and
/// carries out the action each one returns.
///
/// - The client speaks first in every protocol we decrypt (TLS, HTTP): its first bytes decide,
///   however late they come (a slow link, a client that reads the `200` late).
/// - A client still silent after `quietPeriod` may be waiting for a server that speaks first
///   (SMTP, SSH, IMAP banners): the origin is then dialled and watched. If its bytes come before
///   any of the client's, the tunnel is relayed (the banner reaches the client). If the client's
///   come first, they decide as usual and the early connection is closed unless the decision is
///   a relay anyway. Clients that speak at once never pay for that connection.
/// - `deadline` (generous; `--first-bytes-timeout`) bounds the wait: a client whose bytes are
///   still an incomplete ClientHello or request line then, or a tunnel where neither side has
///   spoken, is relayed untouched with a note saying so, so that no connection is held
///   undecided forever.
struct FirstSpeaker: Equatable {
    enum Phase: Equatable {
        /// Waiting for the client alone.
        case listening
        /// The client was silent for the quiet period: the origin is being dialled.
        case dialling
        /// Connected to the origin: waiting for whichever side speaks first.
        case watching
        case decided
    }

    enum Action: Equatable {
        case none
        /// Open a connection to the origin and watch it.
        case dialOrigin
        /// Act on what the client sent (intercept, plain HTTP, or relay when it is neither).
        case clientDecides(FirstBytes)
        /// Relay untouched (over the watched origin connection when there is one), noting why.
        case relay(note: String)
    }

    private(set) var phase = Phase.listening

    // `clientBytes` below: how many bytes the client has sent so far (none decided anything).

    /// The client's bytes decided what they are (never `.needMore`).
    mutating func clientDecided(_ kind: FirstBytes) -> Action {
        guard phase != .decided else { return .none }
        phase = .decided
        return .clientDecides(kind)
    }

    /// The quiet period after the `200` ended.
    mutating func quietPeriodEnded(clientBytes: Int) -> Action {
        guard phase == .listening, clientBytes == 0 else { return .none }
        phase = .dialling
        return .dialOrigin
    }

    mutating func originConnected() -> Action {
        if phase == .dialling { phase = .watching }
        return .none
    }

    /// The dial failed, or the origin closed before saying anything: keep waiting for the client.
    mutating func originUnavailable() -> Action {
        if phase == .dialling || phase == .watching { phase = .listening }
        return .none
    }

    /// The watched origin sent bytes.
    mutating func originSpoke(clientBytes: Int) -> Action {
        // The client spoke first when it has sent anything: its bytes keep deciding.
        guard phase == .watching, clientBytes == 0 else { return .none }
        phase = .decided
        return .relay(note: "relayed untouched: the server spoke first")
    }

    /// The overall wait ended undecided.
    mutating func deadlinePassed(clientBytes: Int, after seconds: Int64) -> Action {
        guard phase != .decided else { return .none }
        phase = .decided
        if clientBytes > 0 {
            return .relay(note: "relayed untouched: the client's first \(clientBytes) bytes were not a complete "
                + "TLS ClientHello or HTTP request line after \(seconds) s")
        }
        return .relay(note: "relayed untouched: neither side sent anything within \(seconds) s")
    }
}
