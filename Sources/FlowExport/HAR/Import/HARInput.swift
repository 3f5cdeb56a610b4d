/// The parts of a HAR 1.2 document the importer reads, as Decodable types.
///
/// Lenient on purpose, so files from Chrome, Firefox, Charles, mitmproxy and our own export all
/// load: only what a flow cannot exist without is required (`log`, `log.entries`, each entry's
/// `startedDateTime` and `request`, the request's `method` and `url`, a header's or param's
/// `name`). Other standard fields are optional but must have their standard type when present.
/// Unknown fields (`_initiator`, `_resourceType`, `_securityState`, `cache`, `pages`, …) are
/// ignored. Our own `_` extras and the free-form `connection`, `serverIPAddress` and `comment`
/// are read when they have the expected type and ignored otherwise: other tools use those names
/// loosely (`connection` is a number in some files, a port string in Chrome's).
enum HARInput {
    struct Document: Decodable {
        let log: Log
    }

    struct Log: Decodable {
        let entries: [Entry]
    }

    struct Entry: Decodable {
        let startedDateTime: String
        let time: Double?
        let request: Request
        let response: Response?
        let timings: Timings?
        let serverIPAddress: String?
        let connection: String?
        let comment: String?
        let error: String?
        let marked: Bool?
        let note: String?
        let rules: [String]?
        let tls: TLS?
        let kind: String?
        let bytesUp: Double?
        let bytesDown: Double?

        private enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, timings, serverIPAddress, connection, comment
            case error = "_error", marked = "_marked", note = "_note", rules = "_rules", tls = "_tls", kind = "_kind"
            case bytesUp = "_bytesUp", bytesDown = "_bytesDown"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            startedDateTime = try container.decode(String.self, forKey: .startedDateTime)
            time = try container.decodeIfPresent(Double.self, forKey: .time)
            request = try container.decode(Request.self, forKey: .request)
            response = try container.decodeIfPresent(Response.self, forKey: .response)
            timings = try container.decodeIfPresent(Timings.self, forKey: .timings)
            serverIPAddress = container.loose(String.self, .serverIPAddress)
            connection = container.loose(String.self, .connection)
            comment = container.loose(String.self, .comment)
            error = container.loose(String.self, .error)
            marked = container.loose(Bool.self, .marked)
            note = container.loose(String.self, .note)
            rules = container.loose([String].self, .rules)
            tls = try container.decodeIfPresent(TLS.self, forKey: .tls)
            kind = container.loose(String.self, .kind)
            bytesUp = container.loose(Double.self, .bytesUp)
            bytesDown = container.loose(Double.self, .bytesDown)
        }
    }

    struct Request: Decodable {
        let method: String
        let url: String
        let httpVersion: String?
        let headers: [NameValue]?
        let postData: PostData?
        let bodySize: Double?
    }

    struct Response: Decodable {
        let status: Double?
        let statusText: String?
        let httpVersion: String?
        let headers: [NameValue]?
        let content: Content?
        let bodySize: Double?
        let comment: String?
        let error: String?

        private enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, headers, content, bodySize, comment
            case error = "_error"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decodeIfPresent(Double.self, forKey: .status)
            statusText = try container.decodeIfPresent(String.self, forKey: .statusText)
            httpVersion = try container.decodeIfPresent(String.self, forKey: .httpVersion)
            headers = try container.decodeIfPresent([NameValue].self, forKey: .headers)
            content = try container.decodeIfPresent(Content.self, forKey: .content)
            bodySize = try container.decodeIfPresent(Double.self, forKey: .bodySize)
            comment = container.loose(String.self, .comment)
            error = container.loose(String.self, .error)
        }
    }

    /// A `{name, value}` pair: a header, or a form parameter of `postData.params`.
    struct NameValue: Decodable {
        let name: String
        let value: String?
    }

    struct PostData: Decodable {
        let mimeType: String?
        let text: String?
        let params: [NameValue]?
        /// `encoding` (ours, mitmproxy) or `_encoding` (Chrome, for binary request bodies).
        let encoding: String?

        private enum CodingKeys: String, CodingKey {
            case mimeType, text, params, encoding
            case chromeEncoding = "_encoding"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType)
            text = try container.decodeIfPresent(String.self, forKey: .text)
            params = try container.decodeIfPresent([NameValue].self, forKey: .params)
            encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
                ?? container.decodeIfPresent(String.self, forKey: .chromeEncoding)
        }
    }

    struct Content: Decodable {
        let size: Double?
        let mimeType: String?
        let text: String?
        let encoding: String?
    }

    struct Timings: Decodable {
        let dns: Double?
        let connect: Double?
        let ssl: Double?
        let send: Double?
        let wait: Double?
        let receive: Double?
    }

    /// Our export's `_tls`: both legs of an intercepted exchange.
    struct TLS: Decodable {
        let clientVersion: String?
        let clientCipher: String?
        let alpn: String?
        let sni: String?
        let upstreamVersion: String?
        let upstreamCipher: String?
        let upstreamSubject: String?
        let upstreamIssuer: String?
        let upstreamNotAfter: String?
    }
}

extension KeyedDecodingContainer {
    /// The value when present with the expected type; nil when absent, null or of another type.
    fileprivate func loose<Value: Decodable>(_ type: Value.Type, _ key: Key) -> Value? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
