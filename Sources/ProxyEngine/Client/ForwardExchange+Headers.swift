import NIOCore
import NIOHTTP1
import ProxyCore

/// The header rules of a forwarded exchange that need no state: hop-by-hop filtering, the
/// upstream `Host`, and how upstream errors become failures.
extension ForwardExchange {
    /// Whether any header could be hop-by-hop; most messages have none, and then the headers
    /// are forwarded as they are, without a copy.
    static func hasHopByHopHeader(_ headers: HTTPHeaders) -> Bool {
        for (name, _) in headers where HopByHopHeaders.mayBeHopByHop(name) && !HopByHopHeaders.standard.forwards(name) {
            return true
        }
        return false
    }

    static func filtered(_ headers: HTTPHeaders, keeping hop: HopByHopHeaders) -> HTTPHeaders {
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count + 1)
        for (name, value) in headers where hop.forwards(name) {
            kept.add(name: name, value: value)
        }
        return kept
    }

    /// The client's headers minus hop-by-hop ones, with `Host` set to the target's authority
    /// (RFC 9112 §3.2.2); the second value tells whether an upgrade is forwarded.
    static func upstreamHeaders(from original: HTTPHeaders, authority: String) -> (HTTPHeaders, Bool) {
        // The common case: one Host header that already names the target and nothing
        // hop-by-hop. Forward the headers as they are.
        if !hasHopByHopHeader(original), original.first(name: "host") == authority,
           original[canonicalForm: "host"].count == 1 {
            return (original, false)
        }
        var connectionValues = original[canonicalForm: "connection"].map(String.init)
        connectionValues += original[canonicalForm: "proxy-connection"].map(String.init)
        let hop = HopByHopHeaders(connectionValues: connectionValues, forwardUpgrade: original.contains(name: "upgrade"))
        var headers = HTTPHeaders()
        headers.reserveCapacity(original.count + 1)
        var hostWritten = false
        if !original.contains(name: "host") {
            headers.add(name: "Host", value: authority)
            hostWritten = true
        }
        for (name, value) in original where hop.forwards(name) {
            if name.equalsIgnoringASCIICase("host") {
                if !hostWritten {
                    headers.add(name: name, value: authority)
                    hostWritten = true
                }
                continue
            }
            headers.add(name: name, value: value)
        }
        if hop.keepsUpgrade {
            headers.add(name: "Connection", value: "upgrade")
        }
        return (headers, hop.keepsUpgrade)
    }

    static func authority(host: String, port: Int, scheme: String) -> String {
        let hostPart = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let defaultPort = (scheme == "https" || scheme == "wss") ? 443 : 80
        return port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    static func failure(for error: any Error, host: String, port: Int, timeout: TimeAmount) -> ProxyFailure {
        switch error {
        case let failure as ProxyFailure:
            return failure
        case is UpstreamTimeoutError:
            return .upstreamTimeout(host: host, port: port, seconds: timeout.nanoseconds / 1_000_000_000)
        case let parserError as HTTPParserError:
            if case .invalidEOFState = parserError {
                return .upstreamClosed(host: host, port: port)
            }
            return .upstreamProtocolError(host: host, reason: "\(parserError)")
        default:
            return .upstreamClosed(host: host, port: port)
        }
    }
}
