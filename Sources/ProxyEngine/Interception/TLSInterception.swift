import NIOCore
import NIOSSL
import ProxyCore
import ProxyModel

/// A certificate chain and key the proxy presents to a client for one host.
public struct ServerIdentity: Sendable {
    public let certificateChain: [NIOSSLCertificate]
    public let privateKey: NIOSSLPrivateKey

    public init(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}

/// Where the engine gets the identity it presents for a host. Called on event loops: a miss
/// must be minted elsewhere and reported through `completion`, on any thread.
public protocol ServerIdentityProvider: Sendable {
    func identity(forHost host: String, completion: @escaping @Sendable (Result<ServerIdentity, any Error>) -> Void)
}

/// Everything HTTPS interception needs, built once per run by the composition root. Without
/// one, CONNECT is always a byte tunnel.
public struct TLSInterception: Sendable {
    /// Leaf certificates per host, minted from the root CA.
    public var identities: any ServerIdentityProvider
    /// How origins are spoken to: the one client context, its minimum version, verification.
    public var upstream: UpstreamTLSPolicy
    /// Hosts whose clients pin their certificates: passed through untouched.
    public var pins: (any PinRegistry)?
    /// The lowest TLS version a client may use (`--client-tls-min`); older clients get a
    /// `protocol_version` alert and a flow naming the version and the flag.
    public var clientMinimumVersion: TLSProtocolVersion = .defaultMinimum
    /// How long a client may stay silent after CONNECT before the origin is dialled to hear
    /// whether it speaks first (SMTP, SSH, IMAP banners); see `FirstSpeaker`.
    public var quietPeriod: TimeAmount = .seconds(1)
    /// The longest a tunnel waits for a decision (`--first-bytes-timeout`): a client whose first
    /// bytes are still incomplete then, or a tunnel where neither side spoke, is relayed
    /// untouched with a note.
    public var firstBytesTimeout: TimeAmount = .seconds(30)

    public init(identities: any ServerIdentityProvider, upstream: UpstreamTLSPolicy, pins: (any PinRegistry)?) {
        self.identities = identities
        self.upstream = upstream
        self.pins = pins
    }

    /// The one TLS client context for every origin.
    public var upstreamContext: NIOSSLContext { upstream.context }

    /// The server contexts intercepted handshakes share (`ServerContextCache`): one per leaf,
    /// minimum version and ALPN list.
    public var serverContexts = ServerContextCache()

    /// Whether decrypted clients may speak HTTP/2 (`--no-http2` turns it off: h2 clients then
    /// fall back to HTTP/1.1, as with a proxy that does not offer it).
    public var offersHTTP2 = true

    /// A server context presenting `identity` to clients of at least `minimumVersion`, agreeing
    /// on `protocols` (ALPN, first match wins). Intercepted connections share them through
    /// `serverContexts`; building one costs about 15 µs.
    static func serverContext(for identity: ServerIdentity, minimumVersion: TLSProtocolVersion,
                              protocols: [String]) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.certificateChain.map { .certificate($0) },
            privateKey: .privateKey(identity.privateKey))
        configuration.applicationProtocols = protocols
        TLSLegSettings.apply(minimum: minimumVersion, to: &configuration)
        // How long a close waits for the client's close_notify. NIOSSL keeps the handler, its
        // SSL object and context alive for this long even after the socket closed (its timer is
        // not cancelled then): at 1,400 new connections a second, the default 5 s held ~300 MiB,
        // 500 ms still ~35 MiB, 100 ms ~5 MiB. Nothing is lost by not waiting longer: everything
        // was written before our close_notify, and the connection closes either way.
        configuration.shutdownTimeout = serverShutdownTimeout
        return try NIOSSLContext(configuration: configuration)
    }

    static let serverShutdownTimeout: TimeAmount = .milliseconds(100)

    /// The protocols to agree on with a client that offered `offered` (its ClientHello's ALPN),
    /// in the client's order: NIOSSL picks the first of ours the client offered, so listing them
    /// as the client did honours its preference. HTTP/1.1 when it offered neither, or nothing.
    func applicationProtocols(offered: [String]) -> [String] {
        Self.applicationProtocols(offered: offered, http2: offersHTTP2)
    }

    static func applicationProtocols(offered: [String], http2: Bool) -> [String] {
        let spoken = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        let agreed = offered.filter { spoken.contains($0) }
        return agreed.isEmpty ? ["http/1.1"] : agreed
    }
}
