import Foundation
import NIOCore
import NIOSSL
import NIOTLS
import ProxyModel
import ProxyTLS

/// What the client side of one decrypted connection negotiated; filled in when its handshake
/// completes and copied onto every flow of the connection.
final class ClientTLSState {
    var details: TLSDetails
    /// The proxy has started closing the connection (see `ClientTLSCloseFinisher`).
    var closeRequested = false

    init(serverName: String?) {
        details = TLSDetails(sni: serverName)
    }

    /// The details of `connection`, for one HTTP/2 stream of it: closing the stream is not
    /// closing the connection.
    init(copying connection: ClientTLSState) {
        details = connection.details
    }
}

/// Watches the handshake between a client and the proxy's minted certificate, right after
/// `NIOSSLServerHandler`: a completed handshake fills in the connection's TLS details, and a
/// failed one is classified for auto-pinning (the client may pin, or not trust the CA) from the
/// error and what `HandshakeWireRecorder` (in front of the TLS handler) saw cross the wire,
/// recorded as a flow naming the pinned host and why (or, for a client that never completed a
/// handshake with us, telling the user to install the CA), and closes the connection. It
/// leaves once the handshake completes, and takes the recorder with it.
///
/// A client refused for its TLS version (`versionRefusal`, decided from its ClientHello) fails
/// for the proxy's own policy: never a pinning signal, and the flow's note names the version
/// and the flag that would allow it.
final class ClientTLSObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let state: ClientTLSState
    /// The host the certificate was minted for (SNI, else the CONNECT target).
    private let host: String
    private let pins: (any PinRegistry)?
    /// Who the client is (address + ClientHello fingerprint): pins are per client.
    private let client: ClientIdentity
    /// False for the proxy's own pages: a completed handshake there shows trust, but a failure
    /// never pins them.
    private let failuresPin: Bool
    private let sink: any FlowSink
    private let wire: HandshakeWireRecorder
    /// The CONNECT's flow, finished and recorded when the handshake fails.
    private var failureFlow: Flow
    private var finished = false
    /// Why this client's TLS version will be refused, when it will (see `TLSVersionRefusal`).
    private let versionRefusal: String?

    init(state: ClientTLSState, host: String, pins: (any PinRegistry)?, client: ClientIdentity, failuresPin: Bool = true,
         sink: any FlowSink, flow: Flow, wire: HandshakeWireRecorder, versionRefusal: String? = nil) {
        self.state = state
        self.host = host
        self.pins = pins
        self.client = client
        self.failuresPin = failuresPin
        self.sink = sink
        self.failureFlow = flow
        self.wire = wire
        self.versionRefusal = versionRefusal
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event, !finished {
            finished = true
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            state.details.clientVersion = UpstreamTLSSession.versionText(tls?.tlsVersion)
            state.details.alpn = negotiated
            pins?.record(.completed, host: host, client: client, tlsVersion: state.details.clientVersion)
            wire.handshakeFinished()
            // Passed on before leaving: a handler that has left the pipeline passes nothing on,
            // and `ClientProtocolSelector` sets the connection up on this event.
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !finished else {
            context.fireErrorCaught(error)
            return
        }
        handshakeFailed(HandshakeFailureClassifier.classify(error, handshakeCompleted: false, wire: wire.evidence),
                        error: error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !finished {
            // A close the proxy started itself (idle timeout, shutdown) says nothing about pinning.
            handshakeFailed(state.closeRequested
                                ? .notAPinSignal
                                : HandshakeFailureClassifier.classify(nil, handshakeCompleted: false, wire: wire.evidence),
                            error: nil)
        }
        context.fireChannelInactive()
    }

    private func handshakeFailed(_ classification: HandshakeFailureClassifier.Classification, error: (any Error)?) {
        finished = true
        wire.handshakeFinished()
        if let versionRefusal {
            var flow = failureFlow
            flow.finishFailedTunnel(because: "TLS handshake with the client failed: its TLS version is below --client-tls-min")
            flow.note = versionRefusal
            sink.record(flow)
            return
        }
        let outcome: HandshakeOutcome
        let reason: String
        switch classification {
        case .rejected(let why, let evidence):
            outcome = .rejected(reason: why, evidence: evidence, alert: HandshakeFailureClassifier.certificateAlert(in: why))
            reason = why
        case .ambiguousEOF(let evidence):
            outcome = .ambiguousEOF(evidence: evidence)
            reason = "the client closed the connection after our certificate, during the TLS handshake"
        case .notAPinSignal:
            outcome = .notAPinSignal
            reason = (error.map(HandshakeFailureClassifier.describe) ?? (state.closeRequested
                ? "the proxy closed the connection during the TLS handshake"
                : "the client closed the connection during the TLS handshake"))
                + (wire.evidence.certificateSent == nil
                    ? " (before our certificate was sent: not a pin signal)"
                    : " (not a pin signal: \(wire.evidence.summary))")
        }
        var flow = failureFlow
        flow.finishFailedTunnel(because: "TLS handshake with the client failed: \(reason)")
        let update = failuresPin
            ? pins?.record(outcome, host: host, client: client, tlsVersion: wire.evidence.certificateSent?.rawValue) : nil
        flow.note = Self.note(for: update)
        sink.record(flow)
    }

    /// What a client that refused our certificate before ever completing a handshake is told.
    static let untrustedClientNote =
        "this client does not trust the ProxyApp CA yet: install it from http://\(BuiltInPages.reservedHost)/"

    /// The flow's note for what the outcome did to the pins: the pinned host, the client, the
    /// evidence and how to undo it.
    static func note(for update: PinUpdate?) -> String? {
        switch update {
        case .pinned(let pin)?: return pinnedNote(pin)
        case .renewed(let pin)?: return pinnedNote(pin, renewed: true)
        case .refused(let why)?: return why
        case .untrustedClient?: return untrustedClientNote
        case .unchanged?, nil: return nil
        }
    }

    /// `pinned HOST for CLIENT: REASON; to undo: …`, the note of every flow a pin made or passed through.
    static func pinnedNote(_ pin: PinnedDomain, renewed: Bool = false) -> String {
        "pinned \(pin.host) for \(pin.clientText)\(renewed ? " (renewed, \(pin.count) failures)" : ""): \(pin.reason); "
            + pin.undoHint
    }
}

/// Sits in front of `NIOSSLServerHandler` and finishes a close the proxy started when the
/// client answers it with a bare FIN (no close_notify, as curl does after `Connection: close`).
///
/// NIOSSL treats that EOF as a ragged half-close and keeps waiting for a close_notify that never
/// comes, for its whole shutdown timeout (5 s), holding the socket in CLOSE-WAIT: under load that
/// is thousands of descriptors. Closing from here bypasses the wait; everything was written.
final class ClientTLSCloseFinisher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let state: ClientTLSState

    init(state: ClientTLSState) {
        self.state = state
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case ChannelEvent.inputClosed = event, state.closeRequested, context.channel.isActive {
            context.close(promise: nil)
        }
    }
}
