import NIOCore
import ProxyCore

/// Everything the engine needs to know about how to behave, fixed at start.
///
/// The CLI builds one from its flags; tests build one with short timeouts and an ephemeral port.
public struct ProxyConfiguration: Sendable {
    /// Address to listen on; port 0 picks a free one.
    public var listenHost: String = "127.0.0.1"
    public var listenPort: Int = 8080
    /// More addresses to listen on (`--listen` repeated, `--lan`); port 0 takes the port the
    /// first address was given.
    public var additionalListenAddresses: [ListenEndpoint] = []
    /// Who may use the proxy and where they may go (`--auth`, `--allow-clients`, `--allow-internal`).
    public var access = ClientAccessPolicy()
    /// How many body bytes per message are kept on a flow.
    public var maxCapturedBodyBytes: Int = 16 << 20
    /// Where bodies of `CapturedBody.blockSize` bytes and more are written while they cross the
    /// proxy (the capture store's body files); nil keeps every captured body in memory until
    /// the sink takes the flow.
    public var bodySpool: BodySpoolFactory?
    /// Largest request header section accepted before answering 431.
    public var maxRequestHeaderBytes: Int = 64 << 10
    /// A client connection with no request in flight is closed after this long.
    public var clientIdleTimeout: TimeAmount = .seconds(60)
    /// Opening an upstream TCP connection may take this long before 504.
    public var connectTimeout: TimeAmount = .seconds(10)
    /// An origin may stay silent this long mid-exchange before 504; pooled idle upstream
    /// connections are closed after the same time.
    public var upstreamTimeout: TimeAmount = .seconds(60)
    /// Idle upstream connections kept per origin and event loop for reuse.
    public var maxIdleUpstreamConnectionsPerOrigin: Int = 32
    /// Client connections served at once; more are answered 503 (`--max-connections`). nil
    /// derives it from the open-file limit (`ConnectionBudget`).
    public var maxConnections: Int?
    /// Idle upstream connections kept in all, split evenly between the event loops; nil derives
    /// it from `maxConnections` (`ConnectionBudget`).
    public var maxIdleUpstreamConnections: Int?
    /// Listeners that are the origin for clients that cannot be given a proxy (`--reverse`).
    public var reverse: [ReverseMapping] = []
    /// The upstream proxy origins are reached through, and the hosts that bypass it.
    public var upstreamProxies = UpstreamProxySettings()
    /// `--throttle`: a slow network for everything a `throttle` rule does not decide; nil: none.
    public var throttle: ThrottleProfile?
    /// The root CA the built-in pages offer for download (nil: HTTPS interception is off).
    public var rootCertificate: RootCertificateDownload?

    public init() {}
}

/// One address the proxy listens on.
public struct ListenEndpoint: Sendable, Hashable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// Reverse mode (`--reverse LISTEN=URL`): a listener whose every request goes to one origin, for
/// a client that cannot be configured to use a proxy (it is pointed at this address instead).
/// Its exchanges are captured, ruled and shown as forward ones, under the origin's name; the
/// upstream request's `Host` names the origin.
public struct ReverseMapping: Sendable, Hashable {
    public var listen: ListenEndpoint
    /// `http` or `https`.
    public var scheme: String
    public var host: String
    public var port: Int
    /// The listener speaks TLS itself, presenting a leaf minted for `host` by the root CA
    /// (`--reverse-tls`): for clients that insist on https.
    public var tls: Bool

    public init(listen: ListenEndpoint, scheme: String, host: String, port: Int, tls: Bool = false) {
        self.listen = listen
        self.scheme = scheme
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// The origin as a URL (no default port).
    public var origin: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(name)" + (port == defaultPort ? "" : ":\(port)")
    }
}
