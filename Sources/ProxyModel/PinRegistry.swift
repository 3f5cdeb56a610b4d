/// What the engine learned from one TLS handshake with a client, as far as pinning goes.
///
/// The engine classifies NIOSSL's errors into these (`ProxyTLS.HandshakeFailureClassifier`
/// says which error texts mean what); the pin policy decides what each one means for the host.
/// It exists so that the policy never sees NIOSSL types and the engine never decides when to pin.
public enum HandshakeOutcome: Sendable, Hashable {
    /// The handshake finished: the client accepted our certificate.
    case completed
    /// The client refused our certificate explicitly (an `unknown_ca` or `bad_certificate`
    /// alert, or the garbled alert of a TLS 1.3 OpenSSL client). `reason` is one line for the
    /// user; `evidence` is the raw error text; `alert` the alert's name when known.
    case rejected(reason: String, evidence: String, alert: String? = nil)
    /// The client closed the connection during the handshake without saying why: a pinning
    /// client (Node closes this way) or just a client that went away. Pins only when repeated.
    case ambiguousEOF(evidence: String)
    /// A failure that says nothing about our certificate (a reset after the handshake, a
    /// protocol error before the certificate was sent, …).
    case notAPinSignal
}

/// What recording one handshake outcome did to the pins, for the flow's note.
public enum PinUpdate: Sendable, Hashable {
    /// No pin was made or changed.
    case unchanged
    /// The host is pinned from now on.
    case pinned(PinnedDomain)
    /// The host was pinned already; its pin was renewed.
    case renewed(PinnedDomain)
    /// The outcome would have pinned the host, but a limit refused it; the reason in one line.
    case refused(String)
    /// The client refused our certificate (or hung up after it) without ever having completed
    /// a handshake with the proxy: it does not trust the CA yet, which is no reason to pin.
    case untrustedClient
}

/// The engine's view of the pinned hosts: asks whether a host is pinned for a client before
/// intercepting it, and reports each client handshake's outcome.
///
/// Both methods are called ON NIO EVENT LOOPS: implementations must answer from memory, never
/// block, and never touch the disk (persist in the background).
public protocol PinRegistry: Sendable {
    /// The live pin for `host` (compared case-insensitively) and `client`, or for `host` and
    /// every client; nil when there is none or it has expired.
    func pin(for host: String, client: ClientIdentity) -> PinnedDomain?
    /// Takes note of a client handshake's outcome for `host`; may pin the host for the client or
    /// renew its pin. A completed handshake shows the client trusts the CA; limits on new pins
    /// apply per client address. `tlsVersion` is the handshake's version, kept as evidence.
    @discardableResult
    func record(_ outcome: HandshakeOutcome, host: String, client: ClientIdentity, tlsVersion: String?) -> PinUpdate
}
