import ProxyModel

/// A response held at a breakpoint as text a person edits, and back: `RequestText`'s format with
/// a status line first.
///
/// ```
/// # edit held response #3, save and quit: the client gets it as saved
/// HTTP/1.1 200 OK
/// Content-Type: application/json
///
/// {"flag":true}
/// ```
///
/// The head and body follow `RequestText`'s rules (framing fields neither shown nor kept, the body
/// decoded for editing and encoded again per the `Content-Encoding` kept, binary bodies refused,
/// one final line end not part of the body). The status line is `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`
/// (the version the client gets stays the connection's), a final status 200–599 (an interim or
/// upgrade status would leave the client waiting for another response), and an optional reason.
public enum ResponseText {
    /// The editor text for a response; throws when it cannot be shown as editable text.
    public static func render(status: Int, reason: String, headers: [HeaderField], body: [UInt8],
                              comments: [String]) throws -> String {
        guard HTTPSyntax.isFieldValue(reason) else {
            throw ComposeError(message: "the reason phrase holds \(HTTPSyntax.controlName(in: reason)), so the response cannot be edited as text")
        }
        var text = MessageText.comments(comments)
        text += "HTTP/1.1 \(status)" + (reason.isEmpty ? "" : " " + reason) + "\n"
        text += try MessageText.headersAndBody(headers: headers, body: body, what: "response",
                                               otherwise: "let it go on unchanged (a)")
        return text
    }

    /// Parses what the person saved (the rules above).
    public static func parse(_ text: String) throws -> ComposedResponse {
        var message = MessageTextParser(text: text)
        let parts = try message.parse(
            missingStartLine: "the text has no status line: write 'HTTP/1.1 200 OK' after the comments"
        ) { (text: String, line: Int) throws(ComposeError) -> (Int, String) in
            try statusLine(text, line: line)
        }
        return ComposedResponse(status: parts.start.0, reason: parts.start.1, headers: parts.headers, body: parts.body)
    }

    private static func statusLine(_ text: String, line: Int) throws(ComposeError) -> (Int, String) {
        let trimmed = HTTPSyntax.trimmed(Substring(text))
        let version = trimmed.prefix { $0 != " " && $0 != "\t" }
        guard ["HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/2.0"].contains(version.uppercased()) else {
            throw ComposeError(line: line, message: "the status line must start with the version: write 'HTTP/1.1 200 OK'")
        }
        let afterVersion = HTTPSyntax.trimmed(trimmed.dropFirst(version.count))
        let code = afterVersion.prefix { $0 != " " && $0 != "\t" }
        guard code.count == 3, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let status = Int(code) else {
            throw ComposeError(line: line, message: "the status '\(HTTPSyntax.shown(code))' is not a three-digit code: write e.g. 'HTTP/1.1 200 OK'")
        }
        guard (200...599).contains(status) else {
            throw ComposeError(line: line, message: "the status \(status) is not a final one: a held response must stay one the client can end on (200 to 599)")
        }
        let reason = HTTPSyntax.trimmed(Substring(afterVersion.dropFirst(code.count)))
        guard HTTPSyntax.isFieldValue(reason), reason.utf8.count <= 256 else {
            throw ComposeError(line: line, message: reason.utf8.count > 256 ? "the reason phrase is over 256 bytes: shorten it"
                               : "the reason phrase holds \(HTTPSyntax.controlName(in: reason)): remove it")
        }
        return (status, reason)
    }
}

/// A response a person edited at a breakpoint, ready to go to the client.
///
/// It exists so the TUI and the control channel hand the engine one checked shape: a final status,
/// a one-line reason, header names that are HTTP tokens with one-line values, no framing fields,
/// and the body as it goes on the wire (already encoded when a `Content-Encoding` is kept).
public struct ComposedResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var headers: [HeaderField]
    public var body: [UInt8]

    public init(status: Int, reason: String, headers: [HeaderField] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }
}
