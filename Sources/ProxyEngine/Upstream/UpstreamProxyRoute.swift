import NIOCore
import ProxyCore

/// What a connection through an upstream proxy needs before it is dialled: the proxy's
/// addresses, and what the proxy is asked for.
///
/// - Through an HTTP proxy, TLS and raw tunnels ask `CONNECT host:port`; plain HTTP needs no
///   tunnel (requests go in absolute form), so there is no handshake.
/// - Through `socks5h://` the name goes to the proxy; through `socks5://` ProxyApp resolves it
///   first (the internal-address guard applies to what it resolves to).
/// - A `dns` rule's address is asked for instead of the name.
///
/// The guard for clients from other machines (`--allow-internal`) holds for what ProxyApp can
/// see: literal addresses, names it resolves, and `localhost`. A name the upstream proxy
/// resolves is that proxy's business: it is the proxy's machine the name is looked up on.
enum UpstreamProxyRoute {
    struct Planned {
        var proxyAddresses: [SocketAddress]
        var handshake: UpstreamProxyHandshake?
    }

    static func plan(proxy: UpstreamProxy, host: String, port: Int, addresses overrides: [String]?, tunnels: Bool,
                     guardPolicy: ClientAccessPolicy?, connector: UpstreamConnector,
                     on eventLoop: any EventLoop) -> EventLoopFuture<Planned> {
        let needsHandshake = proxy.scheme != .http || tunnels
        let target: EventLoopFuture<String>
        let normalized = HostName.normalized(host)
        if let override = overrides?.first {
            target = eventLoop.makeSucceededFuture(override)
        } else if proxy.resolvesNames || IPAddressBytes(normalized) != nil {
            target = eventLoop.makeCompletedFuture {
                if let guardPolicy { try refuseVisibleInternal(normalized, policy: guardPolicy) }
                return normalized
            }
        } else if needsHandshake {
            target = connector.resolve(host: host, port: port, refusingInternal: guardPolicy, on: eventLoop)
                .flatMapThrowing { addresses in
                    guard let address = addresses.first?.ipAddress else {
                        throw ProxyFailure.dnsFailure(host: host, reason: "no address")
                    }
                    return address
                }
        } else {
            target = eventLoop.makeSucceededFuture(normalized)
        }
        return target.flatMap { target in
            connector.resolve(host: proxy.host, port: proxy.port, refusingInternal: nil, on: eventLoop)
                .flatMapErrorThrowing { error in
                    throw ProxyFailure.upstreamProxyFailed(
                        proxy: proxy.description, reason: (error as? ProxyFailure)?.message ?? "cannot resolve its host")
                }
                .map { addresses in
                    Planned(proxyAddresses: addresses,
                            handshake: needsHandshake ? UpstreamProxyHandshake(proxy: proxy, host: target, port: port) : nil)
                }
        }
    }

    /// A literal internal address, or `localhost` and its subdomains, for a guarded client.
    private static func refuseVisibleInternal(_ host: String, policy: ClientAccessPolicy) throws {
        if let address = policy.internalAddress(named: host) {
            throw ProxyFailure.internalDestination(host: host, address: address.description)
        }
    }
}
