import NIOSSL
import ProxyCore

/// The protocol versions and cipher suites one TLS leg (client or upstream) accepts, from the
/// minimum version it was given.
///
/// At TLS 1.2 and above: only forward-secret AEAD suites (ECDHE with AES-GCM or ChaCha20-Poly1305;
/// the TLS 1.3 suites are all of that kind and BoringSSL does not let them be configured). Below
/// TLS 1.2 such peers need CBC and RSA-key-exchange suites, so a legacy minimum also takes
/// NIOSSL's broader default list. One place decides both legs, so they never drift apart.
enum TLSLegSettings {
    /// ECDHE + AEAD, ECDSA and RSA certificates, AES-GCM first (hardware-accelerated), then ChaCha20.
    static let modernCipherSuites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// The cipher string for `modernCipherSuites` as NIOSSL spells it, built once (a server
    /// context is built per connection).
    static let modernCipherString: String = {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.cipherSuiteValues = modernCipherSuites
        return configuration.cipherSuites
    }()

    /// Sets the minimum version and the cipher suites that go with it.
    static func apply(minimum: TLSProtocolVersion, to configuration: inout TLSConfiguration) {
        configuration.minimumTLSVersion = minimum.nioVersion
        configuration.cipherSuites = minimum.isLegacy ? defaultCipherSuites : modernCipherString
    }
}

extension TLSProtocolVersion {
    /// NIOSSL's name for this version.
    var nioVersion: TLSVersion {
        switch self {
        case .tls10: return .tlsv1
        case .tls11: return .tlsv11
        case .tls12: return .tlsv12
        case .tls13: return .tlsv13
        }
    }

    init(_ version: TLSVersion) {
        switch version {
        case .tlsv1: self = .tls10
        case .tlsv11: self = .tls11
        case .tlsv12: self = .tls12
        case .tlsv13: self = .tls13
        }
    }
}
