import ArgumentParser
import NIOCore
import ProxyCore

/// The address `--listen` names: `HOST:PORT` (`127.0.0.1:8080`, `localhost:8080`, `[::1]:8080`,
/// `0.0.0.0:8080`), a host alone (port 8080), `:PORT` or `PORT` alone (loopback). Anything else is
/// refused saying what is wrong and which forms work (argument-parser adds the flag and value).
struct ListenAddress: CustomStringConvertible {
    static let defaultPort = 8080
    static let defaultHost = "127.0.0.1"
    static let `default` = ListenAddress(host: defaultHost, port: defaultPort)

    var host: String
    var port: Int

    static func parse(_ argument: String) throws -> ListenAddress {
        func refusal(_ why: String) -> ValidationError {
            ValidationError("\(why). Write HOST:PORT, HOST, :PORT or PORT, e.g. 127.0.0.1:8080, localhost, :9090 or [::1]:8080.")
        }
        var host: Substring
        var port: Substring?
        var bracketed = false
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { throw refusal("'[' without its ']'") }
            host = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw refusal("expected ':' and a port after ']'") }
                port = rest.dropFirst()
            }
            guard host.contains(":"), (try? SocketAddress(ipAddress: String(host), port: 0)) != nil else {
                throw refusal("'\(host)' in brackets is not an IPv6 address")
            }
            bracketed = true
        } else if argument.filter({ $0 == ":" }).count > 1 {
            throw refusal("an IPv6 address needs brackets: [\(argument)]:\(defaultPort)")
        } else if let colon = argument.firstIndex(of: ":") {
            host = argument[..<colon]
            port = argument[argument.index(after: colon)...]
        } else if !argument.isEmpty, argument.allSatisfy(\.isASCIIDigit) {
            host = ""
            port = Substring(argument)
        } else {
            host = Substring(argument)
        }
        var number = defaultPort
        if let port {
            guard !port.isEmpty else { throw refusal("no port after ':'") }
            guard port.allSatisfy(\.isASCIIDigit), let parsed = Int(port), (0...65535).contains(parsed) else {
                throw refusal("'\(port)' is not a port number from 0 to 65535 (0 picks a free port)")
            }
            number = parsed
        }
        if host.isEmpty {
            guard !bracketed, !argument.isEmpty else { throw refusal("no address given") }
            host = Substring(defaultHost)
        }
        let text = String(host)
        guard bracketed || (try? SocketAddress(ipAddress: text, port: 0)) != nil || DNSHostName.isValid(text) else {
            throw refusal("'\(text)' is not a host name or an IP address")
        }
        return ListenAddress(host: text, port: number)
    }

    /// True for addresses only this machine can reach.
    var isLoopback: Bool {
        let name = host.lowercased()
        return name == "localhost" || name == "localhost." || name == "::1" || name.hasPrefix("127.")
    }

    var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
