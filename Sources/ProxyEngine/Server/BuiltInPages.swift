import NIOCore
import NIOHTTP1
import ProxyCore

/// The root CA certificate as the built-in pages serve it, so devices can fetch and trust it.
public struct RootCertificateDownload: Sendable {
    /// The host name the proxy answers itself with the CA's download page, like mitmproxy's
    /// `mitm.it`: a device already using the proxy opens `http://proxyapp.cert/`.
    public static let pageHost = "proxyapp.cert"

    public var der: [UInt8]
    public var pem: String
    /// Colon-separated upper-case hex, as certificate viewers show it.
    public var sha256Fingerprint: String
    /// The CA's name, as a user sees it in a trust store.
    public var name: String

    public init(der: [UInt8], pem: String, sha256Fingerprint: String, name: String) {
        self.der = der
        self.pem = pem
        self.sha256Fingerprint = sha256Fingerprint
        self.name = name
    }
}

/// What the proxy answers when it is asked for a page itself: an origin-form request such as
/// `GET / HTTP/1.1` sent straight to the listening port, or any request for the reserved host
/// `proxyapp.cert` sent through the proxy (so a phone already using the proxy can get the CA):
/// `http://proxyapp.cert/`, and through a CONNECT `https://proxyapp.cert/` (intercepted with a
/// leaf minted for the name) or plain HTTP in a `CONNECT proxyapp.cert:80` tunnel.
///
/// `/proxy.pac` is a proxy auto-config file naming the address the client reached: a device set
/// to "automatic" proxy configuration with that URL uses the proxy.
///
/// Only GET and HEAD are answered (405 with `Allow` otherwise: nothing here changes state), and
/// nothing is cached (`Cache-Control: no-store`: the CA can be regenerated, and a stale copy
/// would be trusted instead).
enum BuiltInPages {
    struct Page {
        var status: HTTPResponseStatus
        var contentType: String
        var body: [UInt8]
        var extraHeaders: [(String, String)] = []
    }

    /// The host name answered by the proxy itself, like mitmproxy's `mitm.it`.
    static let reservedHost = RootCertificateDownload.pageHost

    /// True for `proxyapp.cert` in any case, with or without the DNS root's trailing dot.
    static func isReservedHost(_ host: String) -> Bool {
        host.utf8.count <= reservedHost.utf8.count + 1 && HostName.normalized(host) == reservedHost
    }

    /// The methods the pages answer.
    static let allowedMethods = "GET, HEAD"

    /// Headers every built-in answer carries.
    static let commonHeaders = [("Cache-Control", "no-store")]

    /// The answer to `method` for `pathAndQuery`; for HEAD the caller sends the head only.
    /// - Parameter proxyAddress: the listener's address the client connected to (what
    ///   `/proxy.pac` points at); nil when unknown.
    /// - Parameter userAgent: the request's, to put the device's own steps first on the CA page.
    static func page(for pathAndQuery: String, method: HTTPMethod, rootCertificate: RootCertificateDownload?,
                     proxyAddress: SocketAddress? = nil, userAgent: String? = nil) -> Page {
        var page = page(method: method, pathAndQuery: pathAndQuery, rootCertificate: rootCertificate,
                        proxyAddress: proxyAddress, platform: DevicePlatform(userAgent: userAgent))
        page.extraHeaders = commonHeaders + page.extraHeaders
        return page
    }

    private static func page(method: HTTPMethod, pathAndQuery: String, rootCertificate: RootCertificateDownload?,
                             proxyAddress: SocketAddress?, platform: DevicePlatform) -> Page {
        guard method == .GET || method == .HEAD else {
            return Page(status: .methodNotAllowed, contentType: "text/plain; charset=utf-8",
                        body: Array("ProxyApp's own pages answer only GET and HEAD, not \(method.rawValue.prefix(40)).\n".utf8),
                        extraHeaders: [("Allow", allowedMethods)])
        }
        let path = pathAndQuery.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        switch (path, rootCertificate) {
        case ("/", let root?), ("/index.html", let root?):
            return html(CertificateInstallPage.html(certificateFingerprintSHA256: root.sha256Fingerprint,
                                                    caName: root.name, platform: platform))
        case ("/", nil), ("/index.html", nil):
            return html(indexHTML)
        case ("/ProxyCA.cer", let root?):
            return Page(status: .ok, contentType: "application/x-x509-ca-cert", body: root.der,
                        extraHeaders: [("Content-Disposition", "attachment; filename=\"ProxyCA.cer\"")])
        case ("/ProxyCA.crt", let root?):
            // The same DER under the name Android's certificate installer looks for.
            return Page(status: .ok, contentType: "application/x-x509-ca-cert", body: root.der,
                        extraHeaders: [("Content-Disposition", "attachment; filename=\"ProxyCA.crt\"")])
        case ("/ProxyCA.mobileconfig", let root?):
            let profile = AppleConfigurationProfile.xml(certificateDER: root.der, sha256Fingerprint: root.sha256Fingerprint,
                                                        caName: root.name)
            return Page(status: .ok, contentType: AppleConfigurationProfile.contentType, body: Array(profile.utf8),
                        extraHeaders: [("Content-Disposition", "attachment; filename=\"ProxyCA.mobileconfig\"")])
        case ("/ProxyCA.pem", let root?):
            return Page(status: .ok, contentType: "application/x-pem-file", body: Array(root.pem.utf8),
                        extraHeaders: [("Content-Disposition", "attachment; filename=\"ProxyCA.pem\"")])
        case ("/proxy.pac", _):
            guard let pac = proxyAddress.flatMap(proxyAutoConfig) else { fallthrough }
            return Page(status: .ok, contentType: "application/x-ns-proxy-autoconfig", body: Array(pac.utf8))
        default:
            return Page(status: .notFound, contentType: "text/plain; charset=utf-8",
                        body: Array("ProxyApp has no page at \(path.prefix(200)); this address is an HTTP proxy.\n".utf8))
        }
    }

    /// A PAC file sending every URL through `address` (the one the device reached the proxy
    /// at, so it works on whichever network the device is). No `DIRECT` fallback: traffic
    /// that skipped the proxy would go missing from the capture unnoticed.
    static func proxyAutoConfig(_ address: SocketAddress) -> String? {
        guard let ip = address.ipAddress, let port = address.port else { return nil }
        let authority = ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        return """
            // ProxyApp: every request goes through the proxy at \(authority).
            function FindProxyForURL(url, host) {
              return "PROXY \(authority)";
            }

            """
    }

    private static func html(_ text: String) -> Page {
        Page(status: .ok, contentType: "text/html; charset=utf-8", body: Array(text.utf8))
    }

    /// The page when HTTPS interception is off (no CA to offer).
    static let indexHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>ProxyApp</title></head>
        <body>
        <h1>ProxyApp is running</h1>
        <p>This address is an HTTP proxy. Point a client at it, for example
        <code>curl -x http://HOST:PORT http://example.com/</code> or
        <code>HTTP_PROXY=http://HOST:PORT some-program</code>, and every exchange is captured.</p>
        </body></html>

        """
}
