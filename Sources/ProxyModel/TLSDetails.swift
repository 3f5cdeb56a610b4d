import Foundation

/// What the proxy negotiated on the two TLS legs of an intercepted exchange: with the client
/// (which saw our minted certificate) and with the origin (whose real certificate we checked).
///
/// It exists so a reader can tell how a decrypted flow was protected on each side — a client on
/// TLS 1.3 talking through us to an origin stuck on TLS 1.2 is worth seeing. Every field is
/// optional: the engine fills in what it learned, and a leg that never completed leaves its
/// fields nil.
public struct TLSDetails: Sendable, Hashable {
    /// Protocol version negotiated with the client, e.g. `TLSv1.3`.
    public var clientVersion: String?
    /// Cipher suite negotiated with the client, e.g. `TLS_AES_128_GCM_SHA256`. The engine leaves
    /// both ciphers nil (NIOSSL exposes no negotiated cipher); imported flows may carry them.
    public var clientCipher: String?
    /// Application protocol negotiated with the client (ALPN), e.g. `http/1.1`.
    public var alpn: String?
    /// The server name the client sent (SNI), as sent; nil when it sent none (IP addresses).
    public var sni: String?
    /// Protocol version negotiated with the origin.
    public var upstreamVersion: String?
    /// Cipher suite negotiated with the origin.
    public var upstreamCipher: String?
    /// The origin certificate's subject, e.g. `CN=example.com`.
    public var upstreamSubject: String?
    /// The origin certificate's issuer.
    public var upstreamIssuer: String?
    /// When the origin certificate expires.
    public var upstreamNotAfter: Date?

    public init(
        clientVersion: String? = nil, clientCipher: String? = nil, alpn: String? = nil, sni: String? = nil,
        upstreamVersion: String? = nil, upstreamCipher: String? = nil, upstreamSubject: String? = nil,
        upstreamIssuer: String? = nil, upstreamNotAfter: Date? = nil
    ) {
        self.clientVersion = clientVersion
        self.clientCipher = clientCipher
        self.alpn = alpn
        self.sni = sni
        self.upstreamVersion = upstreamVersion
        self.upstreamCipher = upstreamCipher
        self.upstreamSubject = upstreamSubject
        self.upstreamIssuer = upstreamIssuer
        self.upstreamNotAfter = upstreamNotAfter
    }

    /// True when no field is set: such a value carries nothing a reader could show, and the
    /// capture store reads it back as `nil`.
    public var isEmpty: Bool {
        clientVersion == nil && clientCipher == nil && alpn == nil && sni == nil && upstreamVersion == nil
            && upstreamCipher == nil && upstreamSubject == nil && upstreamIssuer == nil && upstreamNotAfter == nil
    }
}
