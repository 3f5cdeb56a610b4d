import NIOSSL
import ProxyCore

/// How the proxy speaks TLS to origins, built once per run: the client context every upstream
/// connection uses (building one costs milliseconds), the lowest version it accepts, and whether
/// it verifies certificates.
///
/// With a minimum above TLS 1.0 it also holds a probe context that offers every version down to
/// TLS 1.0 with legacy cipher suites and verifies nothing. It is used only after an origin
/// refused our handshake, to learn which version it speaks, so the 502 can say "origin offers
/// only TLS 1.0" and name the flag; a probe connection is closed after its handshake and never
/// carries a request.
public struct UpstreamTLSPolicy: Sendable {
    /// Offers `http/1.1` only: for requests that must stay HTTP/1 (upgrades).
    public let context: NIOSSLContext
    /// Offers `h2, http/1.1` (nil with `--no-http2`): the origin picks.
    let http2Context: NIOSSLContext?
    public let minimumVersion: TLSProtocolVersion
    public let verifiesCertificates: Bool
    let probeContext: NIOSSLContext?
    /// Whether an HTTP/1 client's request is also offered HTTP/2 to the origin
    /// (`--origin-http2 always`). By default (false) only an HTTP/2 client's is: the origin sees
    /// the protocol the client chose, as without the proxy (mitmproxy does the same), and an
    /// HTTP/1.1 exchange costs no HTTP/2 stream (about a tenth of the proxy's CPU per request).
    public var http2ForHTTP1Clients = false

    /// - Parameters:
    ///   - additionalRootsPEMFile: CA certificates to trust besides the system's (`--upstream-ca`).
    ///   - verify: false for `--insecure-upstream` (no verification at all).
    ///   - minimumVersion: `--upstream-tls-min`.
    ///   - offersHTTP2: false for `--no-http2`.
    public init(additionalRootsPEMFile: String?, verify: Bool,
                minimumVersion: TLSProtocolVersion = .defaultMinimum, offersHTTP2: Bool = true) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        TLSLegSettings.apply(minimum: minimumVersion, to: &configuration)
        // As for clients (`TLSInterception.serverShutdownTimeout`): a connection the proxy closes
        // mid-response (a client that reset its stream or left) waits at most this long for the
        // origin's close_notify; NIOSSL's 5 s default held its descriptor and buffers that long.
        configuration.shutdownTimeout = TLSInterception.serverShutdownTimeout
        if let additionalRootsPEMFile {
            configuration.additionalTrustRoots = [.file(additionalRootsPEMFile)]
        }
        if !verify {
            configuration.certificateVerification = .none
        }
        context = try NIOSSLContext(configuration: configuration)
        if offersHTTP2 {
            configuration.applicationProtocols = ["h2", "http/1.1"]
            http2Context = try NIOSSLContext(configuration: configuration)
        } else {
            http2Context = nil
        }
        self.minimumVersion = minimumVersion
        verifiesCertificates = verify
        if minimumVersion > .tls10 {
            var probe = TLSConfiguration.makeClientConfiguration()
            probe.applicationProtocols = ["http/1.1"]
            TLSLegSettings.apply(minimum: .tls10, to: &probe)
            probe.certificateVerification = .none
            probe.trustRoots = NIOSSLTrustRoots.certificates([])
            probe.shutdownTimeout = .milliseconds(500)
            probeContext = try NIOSSLContext(configuration: probe)
        } else {
            probeContext = nil
        }
    }
}
