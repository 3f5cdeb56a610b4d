/// Who may use the proxy and where they may go: the decisions behind `--auth`,
/// `--allow-clients` and `--allow-internal`, without I/O.
///
/// - **Admission** (at accept): a loopback client is always admitted. A client from another
///   address is admitted when it is inside `--allow-clients` (if that is given), or, without
///   that list, when `--auth` is set (it must then authenticate). With neither, it is refused:
///   the CLI refuses to listen off loopback in that case, so this only catches an address the
///   listener did not expect.
/// - **Authentication** (per proxied request, and per CONNECT): with `--auth`, every client,
///   loopback included, must present accepted credentials. The proxy's own pages (the CA
///   download, reached without a proxy) never ask: a phone fetches the CA before it is set up.
/// - **Internal destinations**: a client from another machine may not reach this machine's
///   own services — loopback, link-local, the unspecified address, or any address of this
///   machine's interfaces — unless `--allow-internal`. Checked on the addresses a name resolves
///   to, so a name pointing at 127.0.0.1 is refused too.
public struct ClientAccessPolicy: Sendable {
    public var credentials = ProxyCredentials()
    public var allowedClients: [IPNetwork] = []
    public var allowsInternalDestinations = false
    /// This machine's own interface addresses (and the listen addresses), refused as
    /// destinations of clients from elsewhere.
    public var ownAddresses: Set<IPAddressBytes> = []

    public init() {}

    public var requiresAuthentication: Bool { !credentials.isEmpty }

    public enum Admission: Hashable, Sendable {
        case admitted
        /// Refused with a 403 (or a SOCKS failure), and why.
        case refused(reason: String)
    }

    /// Whether a client connecting from `address` is served at all; nil (a Unix socket, or an
    /// address the system did not give) counts as local.
    public func admit(client address: IPAddressBytes?) -> Admission {
        guard let address, !address.isLoopback else { return .admitted }
        if !allowedClients.isEmpty {
            if allowedClients.contains(where: { $0.contains(address) }) { return .admitted }
            return .refused(reason: "clients from \(address) are not allowed: add its network to --allow-clients")
        }
        if requiresAuthentication { return .admitted }
        return .refused(reason: "clients from other machines need --auth USER:PASS or --allow-clients")
    }

    /// Whether requests of a client from `address` are kept from this machine's own services.
    public func guardsDestinations(forClient address: IPAddressBytes?) -> Bool {
        guard !allowsInternalDestinations, let address else { return false }
        return !address.isLoopback
    }

    /// Whether `destination` is this machine's own (for a guarded client).
    public func isInternal(_ destination: IPAddressBytes) -> Bool {
        destination.isLoopback || destination.isLinkLocal || destination.isUnspecified
            || ownAddresses.contains(destination)
    }
}

extension ClientAccessPolicy {
    /// The internal address `host` names by itself — an IP literal that is internal, or
    /// `localhost` and its subdomains (RFC 6761: they resolve to loopback) — so a request for
    /// it is refused before anything is dialled. Names that only resolve to an internal address
    /// are caught when the connection is opened.
    public func internalAddress(named host: String) -> IPAddressBytes? {
        let name = HostName.normalized(host)
        if name == "localhost" || name.hasSuffix(".localhost") { return IPAddressBytes("127.0.0.1") }
        guard let address = IPAddressBytes(name), isInternal(address) else { return nil }
        return address
    }
}
