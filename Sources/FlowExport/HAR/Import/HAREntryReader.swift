/// Reads a HAR document entry by entry off a `JSONTokenizer`: the root object, `log`,
/// `log.entries`, and each entry into a `HARInput.Entry` (see `HARInput` for what is required,
/// strict or loose). Bodies stream into `HARBodyText`s; everything else of an entry shares a
/// budget (`maximumEntryFieldBytes`).
struct HAREntryReader {
    /// What an entry's fields other than its bodies may hold together (headers, URL, comments).
    static let maximumEntryFieldBytes = 16 << 20

    let values: HARValueReader
    let bodyLimit: Int

    /// Reads the document and calls `each` with every entry and its index, in order.
    func readDocument(_ each: (HARInput.Entry, Int) throws -> Void) throws {
        var sawLog = false
        let root = try values.next()
        _ = try values.object(root, fields: ["log"]) { _ in
            sawLog = true
            try readLog(each)
        }
        guard root == .objectStart else { throw values.mismatch(expected: "an object", found: root) }
        guard sawLog else { throw values.missing("log") }
        guard try values.next() == .end else { preconditionFailure("the tokenizer ends a document after its root value") }
    }

    private func readLog(_ each: (HARInput.Entry, Int) throws -> Void) throws {
        var sawEntries = false
        let token = try values.next()
        let isObject = try values.object(token, fields: ["entries"]) { _ in
            sawEntries = true
            let list = try values.next()
            guard try values.array(list, costsBudget: false, { index, first in try each(try entry(first), index) }) else {
                throw values.mismatch(expected: "an array", found: list)
            }
        }
        guard isObject else { throw values.mismatch(expected: "an object", found: token) }
        guard sawEntries else { throw values.missing("entries") }
    }

    private static let entryFields = [
        "startedDateTime", "time", "request", "response", "timings", "serverIPAddress", "connection", "comment",
        "_error", "_marked", "_note", "_rules", "_tls", "_kind", "_bytesUp", "_bytesDown", "_forwarded",
        "_webSocketMessages",
    ]

    private func entry(_ first: JSONTokenizer.Token) throws -> HARInput.Entry {
        values.resetBudget(Self.maximumEntryFieldBytes)
        var entry = HARInput.Entry()
        var started: String?
        var request: HARInput.Request?
        let isObject = try values.object(first, fields: Self.entryFields) { name in
            let token = try values.next()
            switch name {
            case "startedDateTime": started = try values.required(token, expected: "a string") { try values.string($0) }
            case "time": entry.time = try values.number(token)
            case "request": request = try self.request(token)
            case "response": entry.response = try response(token)
            case "timings": entry.timings = try timings(token)
            case "serverIPAddress": entry.serverIPAddress = try values.string(token, .loose)
            case "connection": entry.connection = try values.string(token, .loose)
            case "comment": entry.comment = try values.string(token, .loose)
            case "_error": entry.error = try values.string(token, .loose)
            case "_marked": entry.marked = try values.bool(token, .loose)
            case "_note": entry.note = try values.string(token, .loose)
            case "_rules": entry.rules = try strings(token)
            case "_tls": entry.tls = try tls(token)
            case "_kind": entry.kind = try values.string(token, .loose)
            case "_bytesUp": entry.bytesUp = try values.number(token, .loose)
            case "_forwarded": entry.forwarded = try forwarded(token)
            case "_webSocketMessages": entry.webSocketMessages = try webSocketMessages(token)
            default: entry.bytesDown = try values.number(token, .loose)
            }
        }
        guard isObject else { throw values.mismatch(expected: "an object", found: first) }
        guard let started else { throw values.missing("startedDateTime") }
        guard let request else { throw values.missing("request") }
        entry.startedDateTime = started
        entry.request = request
        return entry
    }

    private func request(_ token: JSONTokenizer.Token) throws -> HARInput.Request {
        var request = HARInput.Request()
        var method: String?
        var url: String?
        let fields = ["method", "url", "httpVersion", "headers", "postData", "bodySize"]
        let isObject = try values.object(token, fields: fields) { name in
            let token = try values.next()
            switch name {
            case "method": method = try values.required(token, expected: "a string") { try values.string($0) }
            case "url": url = try values.required(token, expected: "a string") { try values.string($0) }
            case "httpVersion": request.httpVersion = try values.string(token)
            case "headers": request.headers = try nameValues(token)
            case "postData": request.postData = try postData(token)
            default: request.bodySize = try values.number(token)
            }
        }
        guard isObject else { throw values.mismatch(expected: "an object", found: token) }
        guard let method else { throw values.missing("method") }
        guard let url else { throw values.missing("url") }
        request.method = method
        request.url = url
        return request
    }

    private func response(_ token: JSONTokenizer.Token) throws -> HARInput.Response? {
        var response = HARInput.Response()
        let fields = ["status", "statusText", "httpVersion", "headers", "content", "bodySize", "comment", "_error"]
        let isObject = try values.object(token, fields: fields) { name in
            let token = try values.next()
            switch name {
            case "status": response.status = try values.number(token)
            case "statusText": response.statusText = try values.string(token)
            case "httpVersion": response.httpVersion = try values.string(token)
            case "headers": response.headers = try nameValues(token)
            case "content": response.content = try content(token)
            case "bodySize": response.bodySize = try values.number(token)
            case "comment": response.comment = try values.string(token, .loose)
            default: response.error = try values.string(token, .loose)
            }
        }
        return isObject ? response : nil
    }

    /// `_forwarded`: read when it is an object; its request and response as the entry's own.
    private func forwarded(_ token: JSONTokenizer.Token) throws -> HARInput.Forwarded? {
        var forwarded = HARInput.Forwarded()
        let isObject = try values.object(token, .loose, fields: ["request", "response"]) { name in
            let token = try values.next()
            if name == "request" {
                forwarded.request = try request(token)
            } else {
                forwarded.response = try response(token)
            }
        }
        return isObject ? forwarded : nil
    }

    /// `_webSocketMessages`: each element an object (others skipped); its `data` read like a body
    /// (bounded by the import's body limit, not the entry's text budget).
    private func webSocketMessages(_ token: JSONTokenizer.Token) throws -> [HARInput.WebSocketMessage]? {
        var messages: [HARInput.WebSocketMessage] = []
        let isArray = try values.array(token, .loose) { _, first in
            var message = HARInput.WebSocketMessage()
            let fields = ["type", "time", "opcode", "data", "_encoding", "_closeCode", "_size", "_compressed"]
            let isObject = try values.object(first, .loose, fields: fields) { name in
                let token = try values.next()
                switch name {
                case "type": message.type = try values.string(token, .loose)
                case "time": message.time = try values.number(token, .loose)
                case "opcode": message.opcode = try values.number(token, .loose)
                case "data": message.data = try bodyText(token)
                case "_encoding": message.encoding = try values.string(token, .loose)
                case "_closeCode": message.closeCode = try values.number(token, .loose)
                case "_size": message.size = try values.number(token, .loose)
                default: message.compressed = try values.bool(token, .loose)
                }
            }
            if isObject { messages.append(message) }
        }
        return isArray ? messages : nil
    }

    private func postData(_ token: JSONTokenizer.Token) throws -> HARInput.PostData? {
        var postData = HARInput.PostData()
        var encoding: String?
        var chromeEncoding: String?
        let isObject = try values.object(token, fields: ["mimeType", "text", "params", "encoding", "_encoding"]) { name in
            let token = try values.next()
            switch name {
            case "mimeType": postData.mimeType = try values.string(token)
            case "text": postData.text = try bodyText(token)
            case "params": postData.params = try nameValues(token)
            case "encoding": encoding = try values.string(token)
            default: chromeEncoding = try values.string(token)
            }
        }
        postData.encoding = encoding ?? chromeEncoding
        return isObject ? postData : nil
    }

    private func content(_ token: JSONTokenizer.Token) throws -> HARInput.Content? {
        var content = HARInput.Content()
        let isObject = try values.object(token, fields: ["size", "mimeType", "text", "encoding"]) { name in
            let token = try values.next()
            switch name {
            case "size": content.size = try values.number(token)
            case "mimeType": content.mimeType = try values.string(token)
            case "text": content.text = try bodyText(token)
            default: content.encoding = try values.string(token)
            }
        }
        return isObject ? content : nil
    }

    private func timings(_ token: JSONTokenizer.Token) throws -> HARInput.Timings? {
        var timings = HARInput.Timings()
        let isObject = try values.object(token, fields: ["dns", "connect", "ssl", "send", "wait", "receive", "_hold"]) { name in
            let value = try values.number(try values.next())
            switch name {
            case "dns": timings.dns = value
            case "connect": timings.connect = value
            case "ssl": timings.ssl = value
            case "send": timings.send = value
            case "wait": timings.wait = value
            case "_hold": timings.hold = value
            default: timings.receive = value
            }
        }
        return isObject ? timings : nil
    }

    private static let tlsFields = [
        "clientVersion", "clientCipher", "alpn", "sni", "upstreamVersion", "upstreamCipher", "upstreamSubject",
        "upstreamIssuer", "upstreamNotAfter",
    ]

    private func tls(_ token: JSONTokenizer.Token) throws -> HARInput.TLS? {
        var tls = HARInput.TLS()
        let isObject = try values.object(token, fields: Self.tlsFields) { name in
            let value = try values.string(try values.next())
            switch name {
            case "clientVersion": tls.clientVersion = value
            case "clientCipher": tls.clientCipher = value
            case "alpn": tls.alpn = value
            case "sni": tls.sni = value
            case "upstreamVersion": tls.upstreamVersion = value
            case "upstreamCipher": tls.upstreamCipher = value
            case "upstreamSubject": tls.upstreamSubject = value
            case "upstreamIssuer": tls.upstreamIssuer = value
            default: tls.upstreamNotAfter = value
            }
        }
        return isObject ? tls : nil
    }

    /// Headers or form params: an array of `{name, value}` objects, `name` required.
    private func nameValues(_ token: JSONTokenizer.Token) throws -> [HARInput.NameValue]? {
        var pairs: [HARInput.NameValue] = []
        let isArray = try values.array(token) { _, element in
            var name: String?
            var value: String?
            let isObject = try values.object(element, fields: ["name", "value"]) { field in
                let token = try values.next()
                if field == "name" {
                    name = try values.required(token, expected: "a string") { try values.string($0) }
                } else {
                    value = try values.string(token)
                }
            }
            guard isObject else { throw values.mismatch(expected: "an object", found: element) }
            guard let name else { throw values.missing("name") }
            pairs.append(HARInput.NameValue(name: name, value: value))
        }
        return isArray ? pairs : nil
    }

    /// `_rules`: read only when it is an array of strings; anything else is ignored.
    private func strings(_ token: JSONTokenizer.Token) throws -> [String]? {
        var result: [String]? = []
        let isArray = try values.array(token, .loose) { _, element in
            if case .string = element, let text = try values.string(element) {
                result?.append(text)
            } else {
                result = nil
                try values.skip(element)
            }
        }
        return isArray ? result : nil
    }

    private func bodyText(_ token: JSONTokenizer.Token) throws -> HARBodyText? {
        switch token {
        case .string:
            var body = HARBodyText(limit: bodyLimit)
            try values.tokens.readString { body.append($0) }
            return body
        case .null:
            return nil
        default:
            throw values.mismatch(expected: "a string", found: token)
        }
    }
}
