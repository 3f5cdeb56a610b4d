/// The parts of a HAR 1.2 entry the importer reads, as `HAREntryReader` fills them in.
///
/// Lenient on purpose, so files from Chrome, Firefox, Charles, mitmproxy and our own export all
/// load: only what a flow cannot exist without is required (`log`, `log.entries`, each entry's
/// `startedDateTime` and `request`, the request's `method` and `url`, a header's or param's
/// `name`). Other standard fields are optional but must have their standard type when present.
/// Unknown fields (`_initiator`, `_resourceType`, `_securityState`, `cache`, `pages`, …) are
/// skipped unread. Our own `_` extras and the free-form `connection`, `serverIPAddress` and
/// `comment` are read when they have the expected type and ignored otherwise: other tools use
/// those names loosely (`connection` is a number in some files, a port string in Chrome's).
/// Bodies (`text`) are `HARBodyText`s: kept up to the import's body limit.
enum HARInput {
    struct Entry {
        var startedDateTime = ""
        var time: Double?
        var request = Request()
        var response: Response?
        var timings: Timings?
        var serverIPAddress: String?
        var connection: String?
        var comment: String?
        var error: String?
        var marked: Bool?
        var note: String?
        var rules: [String]?
        var tls: TLS?
        var kind: String?
        var bytesUp: Double?
        var bytesDown: Double?
        var forwarded: Forwarded?
        var webSocketMessages: [WebSocketMessage]?
    }

    /// One element of `_webSocketMessages` (Chrome's format; mitmproxy and our export write it
    /// too): `type` send/receive, `time` in seconds since the epoch, `opcode`, `data` (base64
    /// for binary), and our extras.
    struct WebSocketMessage {
        var type: String?
        var time: Double?
        var opcode: Double?
        var data: HARBodyText?
        var encoding: String?
        var closeCode: Double?
        var size: Double?
        var compressed: Bool?
    }

    /// Our export's `_forwarded`: the request as forwarded and the response as the origin sent
    /// it, where a rule changed them (each a standard request or response object).
    struct Forwarded {
        var request: Request?
        var response: Response?
    }

    struct Request {
        var method = ""
        var url = ""
        var httpVersion: String?
        var headers: [NameValue]?
        var postData: PostData?
        var bodySize: Double?
    }

    struct Response {
        var status: Double?
        var statusText: String?
        var httpVersion: String?
        var headers: [NameValue]?
        var content: Content?
        var bodySize: Double?
        var comment: String?
        var error: String?
    }

    /// A `{name, value}` pair: a header, or a form parameter of `postData.params`.
    struct NameValue {
        var name: String
        var value: String?
    }

    struct PostData {
        var mimeType: String?
        var text: HARBodyText?
        var params: [NameValue]?
        /// `encoding` (ours, mitmproxy) or `_encoding` (Chrome, for binary request bodies).
        var encoding: String?
    }

    struct Content {
        var size: Double?
        var mimeType: String?
        var text: HARBodyText?
        var encoding: String?
    }

    struct Timings {
        var dns: Double?
        var connect: Double?
        var ssl: Double?
        var send: Double?
        var wait: Double?
        var receive: Double?
        /// Our export's `_hold`: the time held at a breakpoint.
        var hold: Double?
    }

    /// Our export's `_tls`: both legs of an intercepted exchange.
    struct TLS {
        var clientVersion: String?
        var clientCipher: String?
        var alpn: String?
        var sni: String?
        var upstreamVersion: String?
        var upstreamCipher: String?
        var upstreamSubject: String?
        var upstreamIssuer: String?
        var upstreamNotAfter: String?
    }
}
