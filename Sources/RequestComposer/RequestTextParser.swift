import BodyCodec
import ProxyModel

/// Reads `RequestText`'s format (the rules are on `RequestText`): the request line, then the head
/// and body as every editor message has them (`MessageTextParser`).
struct RequestTextParser {
    private var message: MessageTextParser
    private let defaultOrigin: String?

    init(text: String, defaultOrigin: String?) {
        message = MessageTextParser(text: text)
        self.defaultOrigin = defaultOrigin
    }

    mutating func parse() throws(ComposeError) -> ComposedRequest {
        let defaultOrigin = defaultOrigin
        let parts = try message.parse(
            missingStartLine: "the text has no request line: write 'METHOD URL HTTP/1.1' after the comments"
        ) { (text: String, line: Int) throws(ComposeError) -> ComposedRequest in
            try Self.parseRequestLine(text, line: line, defaultOrigin: defaultOrigin)
        }
        var request = parts.start
        request.headers = parts.headers
        request.body = parts.body
        return request
    }

    private static func parseRequestLine(_ text: String, line: Int, defaultOrigin: String?) throws(ComposeError) -> ComposedRequest {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2 || parts.count == 3 else {
            throw ComposeError(line: line, message: "the request line must be 'METHOD URL HTTP/1.1' (three parts separated by spaces): fix it")
        }
        let method = String(parts[0])
        guard HTTPSyntax.isToken(method) else {
            throw ComposeError(line: line, message: "the method '\(HTTPSyntax.shown(method))' is not an HTTP token: use a name like GET or POST")
        }
        var version = "HTTP/1.1"
        if parts.count == 3 {
            switch parts[2].uppercased() {
            case "HTTP/1.1": version = "HTTP/1.1"
            case "HTTP/2", "HTTP/2.0": version = "HTTP/2"
            default:
                throw ComposeError(line: line, message: "the HTTP version '\(HTTPSyntax.shown(parts[2]))' is not supported: write HTTP/1.1 or HTTP/2")
            }
        }
        return ComposedRequest(method: method, url: try absoluteURL(String(parts[1]), line: line, defaultOrigin: defaultOrigin), httpVersion: version)
    }

    private static func absoluteURL(_ target: String, line: Int, defaultOrigin: String?) throws(ComposeError) -> String {
        var absolute = target
        if target.hasPrefix("/") {
            guard let defaultOrigin else {
                throw ComposeError(line: line, message: "the request line has a path without a host: write the full URL (https://host\(HTTPSyntax.shown(target, limit: 30))) or give the host with --to URL")
            }
            switch RequestURL.parseOrigin(defaultOrigin) {
            case .success(let origin): absolute = origin + target
            case .failure(let problem): throw ComposeError(message: "--to: " + problem.message)
            }
        }
        switch RequestURL.parse(absolute) {
        case .success(let url):
            guard url.userInfo == nil else {
                throw ComposeError(line: line, message: "the URL holds user:password@ before the host: remove it and send an Authorization header instead")
            }
            return url.text
        case .failure(let problem):
            throw ComposeError(line: line, message: problem.message)
        }
    }
}
