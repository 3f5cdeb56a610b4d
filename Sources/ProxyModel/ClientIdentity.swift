/// Who a TLS client is, as far as auto-pinning goes: the address it connects from (without the
/// port, which changes with every connection) and a fingerprint of its ClientHello
/// (`ProxyCore.ClientHelloFingerprint`, JA4-style), which tells apart the TLS stacks on one
/// machine — a browser, curl, a pinning app.
///
/// It exists so a pin made because one client refused our certificate applies to that client
/// only: a browser that trusts the CA keeps being intercepted on a host where an app pins. Two
/// clients with the same TLS stack on one machine share an identity (they cannot be told apart
/// from their bytes); a client can copy another's ClientHello, but not its address, so it can
/// only ever pin for itself and whoever shares its address and stack.
public struct ClientIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The IP address without the port (`127.0.0.1`, `2001:db8::1`).
    public var address: String
    /// The ClientHello fingerprint, e.g. `t131513h2_8daaf6152771_02713d6af862`.
    public var fingerprint: String

    public init(address: String, fingerprint: String) {
        self.address = address
        self.fingerprint = fingerprint
    }

    /// The identity of a client connected from `connectedFrom` (`ip:port` or `[v6]:port`, as
    /// `Flow.clientAddress` holds it).
    public init(connectedFrom: String, fingerprint: String) {
        self.init(address: Self.addressWithoutPort(connectedFrom), fingerprint: fingerprint)
    }

    /// `address fingerprint`, as `proxyapp pins list` and the TUI show it.
    public var description: String { "\(address) \(fingerprint)" }

    public static func < (lhs: ClientIdentity, rhs: ClientIdentity) -> Bool {
        (lhs.address, lhs.fingerprint) < (rhs.address, rhs.fingerprint)
    }

    /// The IP of `ip:port` or `[v6]:port`; text with no port (a bare IPv6 address, or no
    /// address at all) is returned as it is.
    public static func addressWithoutPort(_ text: String) -> String {
        var host = Substring(text)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return String(host)
    }
}
