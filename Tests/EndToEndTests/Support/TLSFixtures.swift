import Foundation
import NIOSSL
import ProxyCore
import ProxyEngine
import ProxyModel
import ProxyTLS

/// The certificates of an HTTPS test: the proxy's root CA (what a client must trust to accept
/// the proxy's leaves) and a separate CA for the test origins (what the proxy trusts through
/// `--upstream-ca`, and a client trusts only when the proxy passes its TLS through untouched).
/// Both are written as PEM files into `directory` for curl and for the proxy.
struct TLSFixtures {
    let proxyCA: CertificateAuthority
    let proxyCAFile: URL
    let originCA: CertificateAuthority
    let originCAFile: URL
    private let originMinter: LeafCertificateMinter

    init(directory: URL) throws {
        proxyCA = try CertificateAuthority.generate(commonName: "ProxyApp Test CA")
        originCA = try CertificateAuthority.generate(commonName: "Test Origin CA")
        proxyCAFile = directory.appendingPathComponent("proxy-ca.pem")
        originCAFile = directory.appendingPathComponent("origin-ca.pem")
        try proxyCA.certificatePEM.write(to: proxyCAFile, atomically: true, encoding: .utf8)
        try originCA.certificatePEM.write(to: originCAFile, atomically: true, encoding: .utf8)
        originMinter = try LeafCertificateMinter(authority: originCA)
    }

    /// A TLS server context for a test origin, its certificate naming `host` (a name or an IP),
    /// signed by the origin CA, minted as if at `mintedAt` (a date long past gives an expired
    /// certificate, one in the future a certificate not yet valid); `protocols` is what it
    /// accepts in ALPN (add `h2` for an origin that speaks HTTP/2).
    func originContext(for host: String, mintedAt: Date = Date(), protocols: [String] = ["http/1.1"]) throws -> NIOSSLContext {
        let leaf = try originMinter.mint(host: host, now: mintedAt)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: leaf.certificateChain.map { .certificate($0) }, privateKey: .privateKey(leaf.privateKey))
        configuration.applicationProtocols = protocols
        return try NIOSSLContext(configuration: configuration)
    }

    /// A self-signed origin context nobody trusts (for the "untrusted upstream" case).
    static func untrustedOriginContext(for host: String) throws -> NIOSSLContext {
        let stranger = try CertificateAuthority.generate(commonName: "Stranger CA")
        let leaf = try LeafCertificateMinter(authority: stranger).mint(host: host)
        return try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: leaf.certificateChain.map { .certificate($0) }, privateKey: .privateKey(leaf.privateKey)))
    }

    /// Interception as `proxyapp run --upstream-ca origin-ca.pem` sets it up (with
    /// `--client-tls-min` and `--upstream-tls-min` as given; `upstreamCA` replaces the origin CA);
    /// `firstBytesTimeout` (seconds) is the longest a tunnel waits for a decision
    /// (`--first-bytes-timeout`); `offersHTTP2` false is `--no-http2` (both sides).
    func interception(pins: (any PinRegistry)?, firstBytesTimeout: Double = 30,
                      clientMinimum: TLSProtocolVersion = .defaultMinimum,
                      upstreamMinimum: TLSProtocolVersion = .defaultMinimum, upstreamCA: URL? = nil,
                      offersHTTP2: Bool = true, http2ForHTTP1Clients: Bool = true) throws -> TLSInterception {
        var upstream = try UpstreamTLSPolicy(additionalRootsPEMFile: (upstreamCA ?? originCAFile).path, verify: true,
                                             minimumVersion: upstreamMinimum, offersHTTP2: offersHTTP2)
        // On by default here (`--origin-http2 always`), so tests can drive an HTTP/2 origin with
        // HTTP/1.1 clients; `OriginProtocolChoiceTests` covers the product's default.
        upstream.http2ForHTTP1Clients = http2ForHTTP1Clients
        var interception = TLSInterception(
            identities: LeafCertificateCache(minter: try LeafCertificateMinter(authority: proxyCA)),
            upstream: upstream, pins: pins)
        interception.offersHTTP2 = offersHTTP2
        interception.clientMinimumVersion = clientMinimum
        interception.firstBytesTimeout = .milliseconds(Int64(firstBytesTimeout * 1000))
        return interception
    }
}
