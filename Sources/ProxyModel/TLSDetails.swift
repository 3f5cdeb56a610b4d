import Foundation

/// What TLS looked like on both sides of a decrypted exchange (placeholder until the capture
/// store branch lands; see the https-b branch).
public struct TLSDetails: Sendable, Hashable {
    public var clientVersion: String?
    public var clientCipher: String?
    public var alpn: String?
    public var sni: String?
    public var upstreamVersion: String?
    public var upstreamCipher: String?
    public var upstreamSubject: String?
    public var upstreamIssuer: String?
    public var upstreamNotAfter: Date?

    public init(clientVersion: String? = nil, clientCipher: String? = nil, alpn: String? = nil, sni: String? = nil,
                upstreamVersion: String? = nil, upstreamCipher: String? = nil, upstreamSubject: String? = nil,
                upstreamIssuer: String? = nil, upstreamNotAfter: Date? = nil) {
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
}
