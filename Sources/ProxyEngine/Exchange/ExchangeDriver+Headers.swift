import NIOCore
import NIOHTTP1
import NIOHTTP2
import ProxyCore

/// The header rules of a forwarded exchange that need no state: hop-by-hop filtering, the
/// upstream `Host`, and how upstream errors become failures.
extension ExchangeDriver {
    /// The request head as written upstream. Through an HTTP upstream proxy with no tunnel
    /// (plain HTTP) the target is in absolute form, as the proxy needs it, with the proxy's login.
    var headAsSent: HTTPRequestHead {
        guard let proxy = key.via, proxy.scheme == .http, upstreamTLS == nil else { return upstreamHead }
        var head = upstreamHead
        // A dns rule's address stands in for the name: the proxy would resolve the name itself.
        let named = addresses?.first ?? key.host
        let host = named.contains(":") ? "[\(named)]" : named
        let origin = "http://" + host + (key.port == 80 ? "" : ":\(key.port)")
        head.uri = head.uri == "*" ? origin : origin + head.uri
        if let authorization = proxy.basicAuthorization {
            head.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
        }
        return head
    }

    /// What a message's headers hold of the hop-by-hop kind, found in one pass.
    enum HopByHopFields: Equatable {
        /// Nothing: the headers are forwarded as they are.
        case none
        /// Fields of the fixed list only (these), each `Connection` and `Proxy-Connection`
        /// naming nothing but `keep-alive` or `close`: dropping them is the whole filter
        /// (`droppingFixedHopByHop`).
        case fixedOnly(HopByHopHeaders.FixedNames)
        /// A `Connection` or `Proxy-Connection` token names other fields, or an upgrade:
        /// `filtered` with the message's `HopByHopHeaders` decides.
        case namedByConnection
    }

    static func hopByHopFields(_ headers: HTTPHeaders) -> HopByHopFields {
        var found = HopByHopHeaders.FixedNames()
        for (name, value) in headers where HopByHopHeaders.mayBeHopByHop(name) {
            guard let index = HopByHopHeaders.fixedIndex(of: name) else { continue }
            let fixedName = HopByHopHeaders.FixedNames(index: index)
            found.insert(fixedName)
            if fixedName == .connection || fixedName == .proxyConnection, !HopByHopHeaders.namesOnlyPersistence(value) {
                return .namedByConnection
            }
        }
        return found.isEmpty ? .none : .fixedOnly(found)
    }

    /// A response's `headers` without their hop-by-hop fields (framing fields kept: the caller
    /// decides those): as they are when there is none (most messages, no copy), the fixed fields
    /// dropped in place when no `Connection` token names others, the full filter otherwise.
    static func withoutHopByHop(_ headers: HTTPHeaders, forwardUpgrade: Bool) -> HTTPHeaders {
        switch hopByHopFields(headers) {
        case .none:
            return headers
        case .fixedOnly(let found):
            return droppingFixedHopByHop(headers, found)
        case .namedByConnection:
            let hop = HopByHopHeaders(connectionValues: headers["connection"], forwardUpgrade: forwardUpgrade)
            return filtered(headers, keeping: hop, droppingFraming: false)
        }
    }

    /// `headers` without the fields of the fixed hop-by-hop list, the others left in place and
    /// in order: what `filtered` keeps (framing kept) when `hopByHopFields` found `.fixedOnly`,
    /// without adding the kept fields one by one (a response with `Connection: keep-alive`, most
    /// of them, spent 4 % of the event loops' time in that copy).
    static func droppingFixedHopByHop(_ headers: HTTPHeaders, _ found: HopByHopHeaders.FixedNames) -> HTTPHeaders {
        var kept = headers
        found.forEachName { kept.remove(name: $0) }
        return kept
    }

    /// `headers` minus the hop-by-hop ones, and minus `Content-Length` and `Transfer-Encoding`
    /// when `droppingFraming` (the caller writes the framing it decided).
    static func filtered(_ headers: HTTPHeaders, keeping hop: HopByHopHeaders, droppingFraming: Bool) -> HTTPHeaders {
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count + 1)
        for (name, value) in headers where hop.forwards(name) && !(droppingFraming && isFramingHeader(name)) {
            kept.add(name: name, value: value)
        }
        return kept
    }

    /// `Content-Length` or `Transfer-Encoding`, in any case.
    static func isFramingHeader(_ name: String) -> Bool {
        switch name.utf8.count {
        case 14: return name.equalsIgnoringASCIICase("content-length")
        case 17: return name.equalsIgnoringASCIICase("transfer-encoding")
        default: return false
        }
    }

    /// The client's headers minus hop-by-hop ones, with `Host` set to the target's authority
    /// (RFC 9112 §3.2.2) and exactly the framing header `framing` decided (the client's own
    /// `Content-Length`/`Transfer-Encoding` are never forwarded as received); the second value
    /// tells whether an upgrade is forwarded.
    static func upstreamHeaders(from original: HTTPHeaders, authority: String,
                                framing: RequestFraming.Decision) -> (HTTPHeaders, Bool) {
        // The common case: one Host header that already names the target, and framing already
        // spelled as the proxy would write it. With nothing hop-by-hop the headers go as they
        // are; with only fixed hop-by-hop fields (curl's `Proxy-Connection: Keep-Alive`) and no
        // `TE` to carry on, those fields are dropped in place.
        if framing.isCanonical, original.first(name: "host") == authority, original.soleHost() != nil {
            switch hopByHopFields(original) {
            case .none:
                return (original, false)
            case .fixedOnly(let found) where !found.contains(.te):
                return (droppingFixedHopByHop(original, found), false)
            case .fixedOnly, .namedByConnection:
                break
            }
        }
        return rebuiltUpstreamHeaders(from: original, authority: authority, framing: framing)
    }

    /// `upstreamHeaders` field by field: the rules whole, for any request.
    static func rebuiltUpstreamHeaders(from original: HTTPHeaders, authority: String,
                                       framing: RequestFraming.Decision) -> (HTTPHeaders, Bool) {
        let connectionValues = original["connection"] + original["proxy-connection"]
        let hop = HopByHopHeaders(connectionValues: connectionValues, forwardUpgrade: original.contains(name: "upgrade"))
        var headers = HTTPHeaders()
        headers.reserveCapacity(original.count + 2)
        var hostWritten = false
        if !original.contains(name: "host") {
            headers.add(name: "Host", value: authority)
            hostWritten = true
        }
        for (name, value) in original where hop.forwards(name) && !isFramingHeader(name) {
            if name.equalsIgnoringASCIICase("host") {
                if !hostWritten {
                    headers.add(name: name, value: authority)
                    hostWritten = true
                }
                continue
            }
            headers.add(name: name, value: value)
        }
        if let (name, value) = framing.framing.header {
            headers.add(name: name, value: value)
        }
        // The proxy relays trailers, so a client's `TE: trailers` holds for the next hop too
        // (gRPC servers look for it); other transfer codings are this hop's alone.
        if original[canonicalForm: "te"].contains(where: { value in
            value.split(separator: ";").first.map { $0.filter { !$0.isWhitespace }.lowercased() } == "trailers"
        }) {
            headers.add(name: "TE", value: "trailers")
        }
        if hop.keepsUpgrade {
            headers.add(name: "Connection", value: "upgrade")
        }
        return (headers, hop.keepsUpgrade)
    }

    /// An HTTP/2 client may split `Cookie` into one field per cookie (RFC 9113 §8.2.3); HTTP/1.1
    /// allows one field, so they are joined with "; " before the request goes to an HTTP/1 origin.
    static func joiningCookies(_ headers: HTTPHeaders) -> HTTPHeaders {
        let cookies = headers["cookie"]
        guard cookies.count > 1 else { return headers }
        var joined = headers
        joined.remove(name: "cookie")
        joined.add(name: "Cookie", value: cookies.joined(separator: "; "))
        return joined
    }

    /// Whether the exchange ties its upstream connection to this client (`ConnectionBoundAuth`:
    /// NTLM or Negotiate in `Authorization` or `WWW-Authenticate`). One pass per side, names
    /// compared by length first: it runs for every response.
    static func bindsConnection(request: HTTPHeaders, response: HTTPHeaders) -> Bool {
        for (name, value) in request where name.utf8.count == 13 && name.equalsIgnoringASCIICase("authorization") {
            if ConnectionBoundAuth.isBoundScheme(value) { return true }
        }
        for (name, value) in response where name.utf8.count == 16 && name.equalsIgnoringASCIICase("www-authenticate") {
            if ConnectionBoundAuth.isBoundScheme(value) { return true }
        }
        return false
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
        case let violation as UpstreamHTTP2Violation:
            return .upstreamProtocolError(host: host, reason: violation.reason)
        case let reset as NIOHTTP2Errors.StreamClosed:
            return .upstreamProtocolError(
                host: host, reason: "the origin reset the HTTP/2 stream (\(HTTP2ErrorText.name(of: reset.errorCode)))")
        case let parserError as HTTPParserError:
            if case .invalidEOFState = parserError {
                return .upstreamClosed(host: host, port: port)
            }
            return .upstreamProtocolError(host: host, reason: parserError.reason)
        default:
            return .upstreamClosed(host: host, port: port)
        }
    }
}

/// An origin's response head as the client gets it, shaped from what the machine decided
/// (`ResponseHeadPlan`): hop-by-hop fields removed, exactly one framing field of the proxy's
/// own when the origin's are not already that, and `Connection` saying the connection's fate.
struct ClientResponseHead {
    let head: HTTPResponseHead

    init(from head: HTTPResponseHead, plan: ResponseHeadPlan, clientVersion: HTTPVersion) {
        let framing = plan.framing
        var headers = ExchangeDriver.withoutHopByHop(head.headers, forwardUpgrade: plan.switchingProtocols)
        if !framing.isCanonical {
            headers.remove(name: "content-length")
            headers.remove(name: "transfer-encoding")
            switch framing.framing {
            case .contentLength(let length):
                headers.add(name: "Content-Length", value: String(length))
            case .none:
                if let length = framing.advertisedLength {
                    headers.add(name: "Content-Length", value: String(length))
                }
            case .chunked, .untilClose:
                break  // the encoder frames it: chunked for HTTP/1.1, until close for 1.0
            }
        }
        let http10 = clientVersion.major == 1 && clientVersion.minor == 0
        if http10 {
            headers.remove(name: "transfer-encoding")
        }
        if plan.switchingProtocols {
            headers.add(name: "Connection", value: "upgrade")
        } else if plan.close {
            headers.add(name: "Connection", value: "close")
        } else if http10 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        self.head = HTTPResponseHead(version: clientVersion, status: head.status, headers: headers)
    }
}
