/// What the first flight of a TLS client says about where it wants to go: read from the bytes a
/// client sends into a CONNECT tunnel, before any TLS library sees them.
///
/// The engine needs this to decide between intercepting (mint a certificate for `serverName`,
/// offer the same ALPN protocols) and passing the tunnel through untouched.
public struct TLSClientHello: Sendable, Hashable {
    /// The SNI host name (RFC 6066 §3), lowercased; nil when the client sent none (clients send
    /// none for IP addresses) or sent something that is not a DNS name.
    public var serverName: String?
    /// ALPN protocol names in the client's order (RFC 7301), e.g. `["h2", "http/1.1"]`; empty
    /// when the extension is absent.
    public var alpnProtocols: [String]
    /// `legacy_version` of the ClientHello: 0x0303 for TLS 1.2 and 1.3 clients.
    public var legacyVersion: UInt16
    /// The `supported_versions` extension as sent (GREASE values included); empty when absent.
    public var supportedVersions: [UInt16]
    /// The cipher suites offered, in the client's order (GREASE values included).
    public var cipherSuites: [UInt16]
    /// The extension types, in the client's order (GREASE values included).
    public var extensionTypes: [UInt16]
    /// The `signature_algorithms` extension (RFC 8446 §4.2.3) in the client's order; empty when
    /// absent or malformed (the TLS library behind us judges it).
    public var signatureAlgorithms: [UInt16]

    public init(serverName: String?, alpnProtocols: [String], legacyVersion: UInt16, supportedVersions: [UInt16],
                cipherSuites: [UInt16] = [], extensionTypes: [UInt16] = [], signatureAlgorithms: [UInt16] = []) {
        self.serverName = serverName
        self.alpnProtocols = alpnProtocols
        self.legacyVersion = legacyVersion
        self.supportedVersions = supportedVersions
        self.cipherSuites = cipherSuites
        self.extensionTypes = extensionTypes
        self.signatureAlgorithms = signatureAlgorithms
    }

    /// True when the client offers TLS 1.3 (0x0304 in `supported_versions`).
    public var offersTLS13: Bool { supportedVersions.contains(0x0304) }
}

/// Reads a ClientHello out of the first bytes of a tunnel, tolerating any input.
///
/// It reassembles the handshake message across consecutive handshake records (large
/// post-quantum key shares push ClientHellos past one record for some clients), and answers
/// `.needMoreData` while the bytes are a prefix of one. Everything is bounded: a record is at
/// most 2^14 bytes (RFC 8446 §5.1), a ClientHello at most `maximumClientHelloLength`, and every
/// length field is checked against the bytes that are actually there, so no input traps or loops.
/// It is fuzz-tested (`TLSClientHelloFuzzTests`).
///
/// Anything a TLS server would reject with `decode_error` (a vector overrunning its parent,
/// trailing bytes, a duplicated extension) is `.notTLS`: what this parser accepts, the TLS
/// library behind it will parse the same way.
///
/// `parse` reads a whole input at once; a tunnel whose hello arrives in pieces feeds a
/// `TLSClientHelloReader`, which looks at every byte once.
public enum TLSClientHelloParser {
    /// The answer for the bytes seen so far.
    public enum Result: Sendable, Equatable {
        /// A complete ClientHello.
        case clientHello(TLSClientHello)
        /// The bytes are a valid beginning of a ClientHello: wait for more.
        case needMoreData
        /// Not a TLS ClientHello (not a handshake record, or a structure no ClientHello can have).
        case notTLS
    }

    /// The largest ClientHello body accepted (64 KiB); a longer one is `.notTLS`.
    public static let maximumClientHelloLength = 64 * 1024

    static let handshakeContentType: UInt8 = 22
    static let clientHelloMessageType: UInt8 = 1
    static let maximumRecordLength = 1 << 14

    /// Parses `bytes`, the first bytes a client sent (they may end anywhere).
    public static func parse(_ bytes: some Collection<UInt8>) -> Result {
        var reader = TLSClientHelloReader()
        return reader.feed(bytes)
    }

    /// Whether `bytes` start like an HTTP/1 request line: 1 to 20 letters A–Z (the method)
    /// followed by a space. Nil while the bytes seen so far could still become one.
    public static func looksLikeHTTP(_ bytes: some Collection<UInt8>) -> Bool? {
        let maximumMethodLength = 20
        var count = 0
        for byte in bytes {
            if byte == UInt8(ascii: " ") { return count > 0 }
            guard byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z"), count < maximumMethodLength else {
                return false
            }
            count += 1
        }
        return nil
    }
}
