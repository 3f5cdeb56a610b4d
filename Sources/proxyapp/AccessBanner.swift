import ProxyCore
import ProxyEngine

/// The banner lines that tell a user where devices reach the proxy and who may use it: the
/// proxy URL to type into a phone and its CA page for each usable interface address (when
/// the proxy listens beyond loopback), and the access rules in force.
enum AccessBanner {
    /// The address to show for `export http_proxy=…` on this machine: an unspecified bind
    /// (`0.0.0.0`, `::`) is reached through loopback; no program can use `0.0.0.0` itself.
    static func localAddress(_ bound: ListenAddress) -> ListenAddress {
        switch bound.host {
        case "0.0.0.0": return ListenAddress(host: "127.0.0.1", port: bound.port)
        case "::": return ListenAddress(host: "::1", port: bound.port)
        default: return bound
        }
    }

    /// Each proxy URL a device on the network can use (`http://IP:PORT`) with its interface's
    /// name, once each; empty when the proxy listens on loopback only.
    static func deviceURLs(bound: [ListenAddress], interfaces: [LocalInterfaceAddress]) -> [(url: String, interface: String)] {
        var reachable: [(name: String, host: String, port: Int)] = []
        let usable = LocalInterfaces.usableFromLAN(interfaces)
        for address in bound where !address.isLoopback {
            switch address.host {
            case "0.0.0.0":
                reachable += usable.filter(\.address.isIPv4).map { ($0.interface, $0.urlHost, address.port) }
            case "::":
                // Linux binds `::` dual-stack: IPv4 clients reach it too.
                reachable += usable.map { ($0.interface, $0.urlHost, address.port) }
            default:
                let named = IPAddressBytes(address.host).flatMap { ip in usable.first { $0.address == ip } }
                let host = IPAddressBytes(address.host).map { $0.isIPv4 ? $0.description : "[\($0)]" } ?? address.host
                reachable.append((named?.interface ?? "", host, address.port))
            }
        }
        var seen = Set<String>()
        return reachable.filter { seen.insert("\($0.host):\($0.port)").inserted }
            .map { ("http://\($0.host):\($0.port)", $0.name) }
    }

    /// One line per address a device on the network can use, with the CA page when HTTPS
    /// interception is on; empty when the proxy listens on loopback only.
    static func deviceLines(bound: [ListenAddress], interfaces: [LocalInterfaceAddress], caPage: Bool) -> [String] {
        let urls = deviceURLs(bound: bound, interfaces: interfaces)
        guard !urls.isEmpty else { return [] }
        var lines = ["Devices on the network: set the proxy to one of these" + (caPage ? ", then open its CA page:" : ":")]
        for (url, interface) in urls {
            let label = interface.isEmpty ? "" : " (\(interface))"
            lines.append("  \(url)\(label)" + (caPage ? "   CA: \(url)/ProxyCA.cer" : ""))
        }
        return lines
    }

    /// Who may use the proxy, in one line.
    static func accessLine(_ policy: ClientAccessPolicy, offLoopback: Bool) -> String {
        var parts: [String] = []
        if policy.requiresAuthentication {
            parts.append("every client logs in (--auth, \(policy.credentials.count) user\(policy.credentials.count == 1 ? "" : "s"))")
        }
        if !policy.allowedClients.isEmpty {
            parts.append("other machines only from \(policy.allowedClients.map(\.description).joined(separator: ", "))")
        } else if offLoopback && policy.requiresAuthentication {
            parts.append("any address may try to log in")
        }
        if !offLoopback && parts.isEmpty { return "Access: this machine only (listening on loopback)" }
        if offLoopback {
            parts.append(policy.allowsInternalDestinations
                         ? "they may reach this machine's own services (--allow-internal)"
                         : "they may not reach this machine's own services")
        }
        return "Access: " + parts.joined(separator: "; ")
    }
}
