import NIOSSL

/// Placeholder until the https-c branch lands with the real, tested classifier.
public enum HandshakeFailureClassifier {
    public enum Classification: Sendable, Equatable {
        case rejected(reason: String, evidence: String)
        case ambiguousEOF(evidence: String)
        case notAPinSignal
    }

    public static func classify(_ error: any Error, handshakeCompleted: Bool) -> Classification {
        let text = String(describing: error)
        guard !handshakeCompleted else { return .notAPinSignal }
        for marker in ["ALERT_UNKNOWN_CA", "ALERT_BAD_CERTIFICATE", "ALERT_CERTIFICATE_UNKNOWN", "BAD_PACKET_LENGTH",
                       "DECRYPTION_FAILED_OR_BAD_RECORD_MAC"] where text.contains(marker) {
            return .rejected(reason: "client rejected the certificate (\(marker))", evidence: text)
        }
        if text.contains("EOF") || text.contains("uncleanShutdown") { return .ambiguousEOF(evidence: text) }
        return .notAPinSignal
    }
}
