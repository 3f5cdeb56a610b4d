import ProxyTLS
import XCTest

/// A client's failed handshake reads as what the client did, with BoringSSL's reason names only
/// in parentheses: the flows once said just `TLS handshake with the client failed: WRONG_CURVE`
/// (a client offering only AES128-SHA) or `BAD_PACKET_LENGTH, DECRYPTION_FAILED_OR_BAD_RECORD_MAC`
/// (junk behind a ClientHello).
final class ClientHandshakeFailureTextTests: XCTestCase {
    func testCommonFailuresInWords() {
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["BAD_PACKET_LENGTH", "DECRYPTION_FAILED_OR_BAD_RECORD_MAC"]),
                       "the client sent bytes that are no valid TLS record (BAD_PACKET_LENGTH, DECRYPTION_FAILED_OR_BAD_RECORD_MAC)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["WRONG_CURVE"]),
                       "the client offered no cipher suite or key exchange the proxy accepts (at TLS 1.2: ECDHE with AES-GCM "
                       + "or ChaCha20-Poly1305; --client-tls-min 1.0 also allows legacy suites) (WRONG_CURVE)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["TLSV1_ALERT_DECODE_ERROR"]),
                       "the client sent a decode_error alert (TLSV1_ALERT_DECODE_ERROR)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["UNSUPPORTED_PROTOCOL"]),
                       "the client offered no TLS version the proxy accepts (UNSUPPORTED_PROTOCOL)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["DECODE_ERROR"]),
                       "a TLS handshake message of the client could not be read (DECODE_ERROR)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["UNEXPECTED_MESSAGE"]),
                       "the client sent a TLS handshake message out of order (UNEXPECTED_MESSAGE)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: ["SOMETHING_NEW"]), "a TLS error (SOMETHING_NEW)")
        XCTAssertEqual(ClientHandshakeFailureText.text(for: []), "a TLS error")
    }
}
