import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// What every worker does, settled before the first connection: where to connect, the bytes
/// of the request (and of the CONNECT), the TLS context, the limits. Built once and shared, so
/// a request costs no formatting and no context set-up.
final class LoadPlan: Sendable {
    let target: LoadTarget
    /// The proxy's address with `--proxy`, else the origin's; resolved once.
    let connectAddress: SocketAddress
    let throughProxy: Bool
    /// `--socks5`: the proxy is reached with a SOCKS5 handshake instead of CONNECT.
    let socks5: Bool
    let tlsContext: NIOSSLContext?
    let newConnectionPerRequest: Bool
    /// `--h2`: requests in flight on each connection, as HTTP/2 streams; nil for HTTP/1.1.
    let http2Streams: Int?
    /// Per step: opening a connection (TCP, CONNECT, TLS) or one request and its response.
    let timeout: TimeAmount
    let request: ByteBuffer
    let connectRequest: ByteBuffer
    /// SOCKS5: the greeting (one method: no login) and the CONNECT request by host name.
    let socksGreeting = ByteBuffer(bytes: [0x05, 0x01, 0x00])
    let socksRequest: ByteBuffer
    /// The SNI to send: the host name, never an IP address (clients send none for those; the
    /// certificate is then checked against the address connected to).
    let serverHostname: String?
    /// The request of every HTTP/2 stream, turned into HEADERS by
    /// `HTTP2FramePayloadToHTTP1ClientCodec` (Host becomes `:authority`).
    let http2Request: HTTPRequestHead
    /// The client's SETTINGS: no server push (nothing here would read it).
    let http2Connection: NIOHTTP2Handler.ConnectionConfiguration
    let http2Stream = NIOHTTP2Handler.StreamConfiguration()

    init(target: LoadTarget, connectAddress: SocketAddress, throughProxy: Bool, socks5: Bool = false,
         tlsContext: NIOSSLContext?,
         newConnectionPerRequest: Bool, timeout: TimeAmount, http2Streams: Int? = nil) {
        self.target = target
        self.connectAddress = connectAddress
        self.throughProxy = throughProxy
        self.socks5 = throughProxy && socks5
        self.tlsContext = tlsContext
        self.newConnectionPerRequest = newConnectionPerRequest
        self.timeout = timeout
        self.http2Streams = http2Streams
        serverHostname = target.hostIsIPAddress ? nil : target.host
        let requestTarget = throughProxy && !socks5 && target.scheme == .http
            ? "http://\(target.authority)\(target.path)" : target.path
        var head = "GET \(requestTarget) HTTP/1.1\r\nHost: \(target.authority)\r\nUser-Agent: proxyapp-load\r\nAccept: */*\r\n"
        if newConnectionPerRequest { head += "Connection: close\r\n" }
        request = ByteBuffer(string: head + "\r\n")
        connectRequest = ByteBuffer(
            string: "CONNECT \(target.authority) HTTP/1.1\r\nHost: \(target.authority)\r\nUser-Agent: proxyapp-load\r\n\r\n")
        let host = Array(target.host.utf8.prefix(255))
        socksRequest = ByteBuffer(bytes: [0x05, 0x01, 0x00, 0x03, UInt8(host.count)] + host
                                  + [UInt8(target.port >> 8), UInt8(target.port & 0xFF)])
        http2Request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: [
            "host": target.authority, "user-agent": "proxyapp-load", "accept": "*/*",
        ])
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = nioDefaultSettings + [HTTP2Setting(parameter: .enablePush, value: 0)]
        http2Connection = connection
    }

    /// HTTPS through the proxy: CONNECT first, TLS inside the tunnel; through SOCKS5 every
    /// target is tunnelled.
    var tunnels: Bool { throughProxy && (socks5 || target.scheme == .https) }

    /// A TLS client handler for one connection, checking the name or address of the target.
    func makeTLSHandler() throws -> NIOSSLClientHandler? {
        guard let tlsContext else { return nil }
        return try NIOSSLClientHandler(context: tlsContext, serverHostname: serverHostname)
    }
}

/// The window of a run: the warm-up ends at `measuredFrom`; no request starts at `end` or later.
struct LoadSchedule: Sendable {
    let measuredFrom: NIODeadline
    let end: NIODeadline

    func isMeasured(_ instant: NIODeadline) -> Bool {
        instant >= measuredFrom && instant < end
    }
}
