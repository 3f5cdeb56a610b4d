import BodyCodec
import ProxyModel

/// Reads `RequestText`'s format (the rules are on `RequestText`): one pass over the head's lines,
/// the body taken whole after the blank line, so a large body costs one copy.
struct RequestTextParser {
    private let bytes: [UInt8]
    private let defaultOrigin: String?
    private var index = 0
    private var line = 0
    /// Whether the last line read ended in CRLF.
    private var lastLineCRLF = false

    init(text: String, defaultOrigin: String?) {
        bytes = Array(text.utf8)
        self.defaultOrigin = defaultOrigin
    }

    mutating func parse() throws(ComposeError) -> ComposedRequest {
        var requestLine: String?
        while let next = nextLine() {
            if next.hasPrefix("#") || next.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            requestLine = next
            break
        }
        guard let requestLine else {
            throw ComposeError(message: "the text has no request line: write 'METHOD URL HTTP/1.1' after the comments")
        }
        var request = try parseRequestLine(requestLine)
        var contentEncodings: [(value: String, line: Int)] = []
        var endedByBlankLine = false
        while let next = nextLine() {
            if next.isEmpty {
                endedByBlankLine = true
                break
            }
            let field = try parseHeader(next)
            if field.name.equalsIgnoringASCIICase("Content-Encoding") { contentEncodings.append((field.value, line)) }
            if !HTTPSyntax.isFraming(field.name) { request.headers.append(field) }
        }
        var body = endedByBlankLine ? Array(bytes[index...]) : []
        if lastLineCRLF, body.last == 0x0A, body.dropLast().last == 0x0D {
            body.removeLast(2)
        } else if body.last == 0x0A {
            body.removeLast()
        }
        request.body = try encoded(body, contentEncodings)
        return request
    }

    /// The next line without its line end (LF or CRLF); nil at the end of the text.
    private mutating func nextLine() -> String? {
        guard index < bytes.count else { return nil }
        line += 1
        let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
        var contentEnd = end
        lastLineCRLF = end < bytes.count && end > index && bytes[end - 1] == 0x0D
        if lastLineCRLF { contentEnd -= 1 }
        let text = String(decoding: bytes[index..<contentEnd], as: UTF8.self)
        index = min(end + 1, bytes.count)
        return text
    }

    private func parseRequestLine(_ text: String) throws(ComposeError) -> ComposedRequest {
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
        return ComposedRequest(method: method, url: try absoluteURL(String(parts[1])), httpVersion: version)
    }

    private func absoluteURL(_ target: String) throws(ComposeError) -> String {
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

    private func parseHeader(_ text: String) throws(ComposeError) -> HeaderField {
        if text.first == " " || text.first == "\t" {
            throw ComposeError(line: line, message: "this line starts with a space: folded header lines are not allowed; join it to the header line above")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw ComposeError(line: line, message: "the header line '\(HTTPSyntax.shown(text))' has no colon: write 'Name: value', and leave a blank line before the body")
        }
        let name = String(text[..<colon])
        guard HTTPSyntax.isToken(name) else {
            throw ComposeError(line: line, message: "the header name '\(HTTPSyntax.shown(name))' is not an HTTP token (no spaces or separators): fix the name")
        }
        let value = HTTPSyntax.trimmed(text[text.index(after: colon)...])
        guard HTTPSyntax.isFieldValue(value) else {
            throw ComposeError(line: line, message: "the \(HTTPSyntax.shown(name)) header value holds \(HTTPSyntax.controlName(in: value)): remove it")
        }
        return HeaderField(name: name, value: value)
    }

    /// The body encoded per the kept `Content-Encoding` headers, in their order.
    private func encoded(_ body: [UInt8], _ headers: [(value: String, line: Int)]) throws(ComposeError) -> [UInt8] {
        for header in headers {
            if let unknown = ContentEncoding.list(from: header.value).unknown.first {
                throw ComposeError(line: header.line, message: "the Content-Encoding '\(HTTPSyntax.shown(unknown))' is unknown: use gzip, deflate, br, zstd or identity, or remove the header")
            }
        }
        guard !headers.isEmpty, !body.isEmpty else { return body }
        let value = headers.map(\.value).joined(separator: ", ")
        do {
            return try BodyEncoder.encode(body, contentEncoding: value)
        } catch {
            throw ComposeError(line: headers[0].line, message: "the body could not be compressed as '\(HTTPSyntax.shown(value))': try another Content-Encoding or remove the header")
        }
    }
}
