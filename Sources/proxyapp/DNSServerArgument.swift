import ArgumentParser
import NIOCore

/// `--dns-server`: a DNS server given by IP address, with an optional port (53 by default):
/// `192.0.2.53`, `192.0.2.53:5353`, `2001:db8::53`, `[2001:db8::53]:5353`. Names are refused
/// (resolving the resolver's own address would need a resolver), and so are IPv6 zones
/// (`%eth0`: c-ares's server list cannot carry them). ArgumentParser names the flag and value.
enum DNSServerArgument {
    static func parse(_ argument: String) throws -> SocketAddress {
        let refusal = ValidationError(
            "not an IP address with an optional port; write e.g. 192.0.2.53, 192.0.2.53:5353 or [2001:db8::53]:53.")
        var host = Substring(argument)
        var port = 53
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { throw refusal }
            host = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":", let number = Int(rest.dropFirst()) else { throw refusal }
                port = number
            }
        } else if argument.filter({ $0 == ":" }).count == 1, let colon = argument.firstIndex(of: ":") {
            host = argument[..<colon]
            guard let number = Int(argument[argument.index(after: colon)...]) else { throw refusal }
            port = number
        }
        guard (1...65535).contains(port), !host.contains("%"), let address = try? SocketAddress(ipAddress: String(host), port: port) else {
            throw refusal
        }
        return address
    }
}
