/// A failed client handshake in words for its flow, from BoringSSL's reason names.
///
/// It exists because those names are all NIOSSL reports (`BAD_PACKET_LENGTH,
/// DECRYPTION_FAILED_OR_BAD_RECORD_MAC`, `WRONG_CURVE`), and they are a library's vocabulary,
/// not an explanation: the words say what the client did, and the names follow in parentheses
/// for whoever needs to look them up.
public enum ClientHandshakeFailureText {
    /// Names our server reports when the bytes it read are no valid TLS record (junk after a
    /// ClientHello, an unencrypted record where an encrypted one was due).
    static let badRecords: Set<String> = [
        "BAD_PACKET_LENGTH", "DECRYPTION_FAILED_OR_BAD_RECORD_MAC", "WRONG_VERSION_NUMBER", "UNEXPECTED_RECORD",
        "RECORD_TOO_LARGE", "DATA_LENGTH_TOO_LONG", "ENCRYPTED_LENGTH_TOO_LONG", "BAD_LENGTH",
    ]
    /// Names for a ClientHello offering nothing we accept (BoringSSL says `WRONG_CURVE` also for
    /// a client offering only legacy suites such as `AES128-SHA`).
    static let nothingInCommon: Set<String> = ["NO_SHARED_CIPHER", "WRONG_CURVE", "NO_SHARED_GROUP"]
    static let unreadableMessages: Set<String> = ["DECODE_ERROR", "PARSE_TLSEXT", "BAD_HELLO_REQUEST", "EXCESS_HANDSHAKE_DATA"]

    /// `names` (BoringSSL reason names, in the order reported) as one clause.
    public static func text(for names: [String]) -> String {
        guard !names.isEmpty else { return "a TLS error" }
        let set = Set(names)
        let words: String
        if let alert = TLSErrorReasons.receivedAlert(in: set) {
            words = "the client sent a \(alert) alert"
        } else if !set.isDisjoint(with: badRecords) {
            words = "the client sent bytes that are no valid TLS record"
        } else if !set.isDisjoint(with: nothingInCommon) {
            words = "the client offered no cipher suite or key exchange the proxy accepts (at TLS 1.2: ECDHE with AES-GCM "
                + "or ChaCha20-Poly1305; --client-tls-min 1.0 also allows legacy suites)"
        } else if set.contains("UNSUPPORTED_PROTOCOL") {
            words = "the client offered no TLS version the proxy accepts"
        } else if !set.isDisjoint(with: unreadableMessages) {
            words = "a TLS handshake message of the client could not be read"
        } else if set.contains("UNEXPECTED_MESSAGE") {
            words = "the client sent a TLS handshake message out of order"
        } else if set.contains("HTTP_REQUEST") || set.contains("HTTPS_PROXY_REQUEST") {
            words = "the client sent plain HTTP instead of TLS"
        } else {
            words = "a TLS error"
        }
        return "\(words) (\(names.joined(separator: ", ")))"
    }
}
