import BodyCodec
import ProxyModel

/// The part of the editor formats (`RequestText`, `ResponseText`) after the first line: header
/// lines, a blank line, the body taken whole, re-encoded per the `Content-Encoding` kept. One pass
/// over the lines, so a large body costs one copy.
struct MessageTextParser {
    private let bytes: [UInt8]
    private var index = 0
    /// The line last read, counted from 1 (for messages).
    private(set) var line = 0
    /// Whether the last line read ended in CRLF.
    private var lastLineCRLF = false

    init(text: String) {
        bytes = Array(text.utf8)
    }

    /// The first line that is not a comment or blank, read by `startLine` (given the line and its
    /// number); then the headers (framing fields dropped) and the body.
    mutating func parse<Start>(
        missingStartLine: String, startLine: (String, Int) throws(ComposeError) -> Start
    ) throws(ComposeError) -> (start: Start, headers: [HeaderField], body: [UInt8]) {
        var first: String?
        while let next = nextLine() {
            if next.hasPrefix("#") || next.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            first = next
            break
        }
        guard let first else { throw ComposeError(message: missingStartLine) }
        let start = try startLine(first, line)
        var headers: [HeaderField] = []
        var contentEncodings: [(value: String, line: Int)] = []
        var endedByBlankLine = false
        while let next = nextLine() {
            if next.isEmpty {
                endedByBlankLine = true
                break
            }
            let field = try parseHeader(next)
            if field.name.equalsIgnoringASCIICase("Content-Encoding") { contentEncodings.append((field.value, line)) }
            if !HTTPSyntax.isFraming(field.name) { headers.append(field) }
        }
        var body = endedByBlankLine ? Array(bytes[index...]) : []
        if lastLineCRLF, body.last == 0x0A, body.dropLast().last == 0x0D {
            body.removeLast(2)
        } else if body.last == 0x0A {
            body.removeLast()
        }
        return (start, headers, try encoded(body, contentEncodings))
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
