import NIOHTTP1

/// What the proxy answers when it is asked for a page itself (an origin-form request such as
/// `GET / HTTP/1.1` sent straight to the listening port) rather than asked to forward one.
///
/// The HTTPS issue adds the root CA downloads here.
enum BuiltInPages {
    struct Page {
        var status: HTTPResponseStatus
        var contentType: String
        var body: String
    }

    static func page(for pathAndQuery: String) -> Page {
        let path = pathAndQuery.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        switch path {
        case "/", "/index.html":
            return Page(status: .ok, contentType: "text/html; charset=utf-8", body: indexHTML)
        default:
            return Page(status: .notFound, contentType: "text/plain; charset=utf-8",
                        body: "ProxyApp has no page at \(path.prefix(200)); this address is an HTTP proxy.\n")
        }
    }

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
