import BodyCodec
import ProxyModel

/// What the editor formats (`RequestText`, `ResponseText`) write alike after their first line:
/// comments first, one-line headers without framing fields, a blank line, the body decoded.
enum MessageText {
    /// Each comment line as `# text` (escaped: a comment never carries terminal controls).
    static func comments(_ comments: [String]) -> String {
        var text = ""
        for comment in comments {
            for line in comment.split(separator: "\n", omittingEmptySubsequences: false) {
                text += "# " + TerminalText.escaped(String(line.hasSuffix("\r") ? line.dropLast() : line)) + "\n"
            }
        }
        return text
    }

    /// The header lines (pseudo-fields and framing left out), the blank line, the decoded body
    /// and its final line end; `what` (`request`, `response`) names the message in refusals and
    /// `otherwise` says what to do instead when its body cannot be shown.
    static func headersAndBody(headers: [HeaderField], body: [UInt8], what: String, otherwise: String) throws(ComposeError) -> String {
        var text = ""
        for header in headers where !header.name.hasPrefix(":") && !HTTPSyntax.isFraming(header.name) {
            guard HTTPSyntax.isToken(header.name), HTTPSyntax.isFieldValue(header.value) else {
                throw ComposeError(message: "the header '\(HTTPSyntax.shown(header.name))' is not a one-line 'Name: value', so the \(what) cannot be edited as text")
            }
            text += header.name + ": " + header.value + "\n"
        }
        text += "\n"
        let decoded = try decodedBody(body, headers: headers, what: what, otherwise: otherwise)
        if !decoded.isEmpty { text += decoded + "\n" }
        return text
    }

    private static func decodedBody(_ body: [UInt8], headers: [HeaderField], what: String, otherwise: String) throws(ComposeError) -> String {
        let codings = headers.filter { $0.name.equalsIgnoringASCIICase("Content-Encoding") }.map(\.value)
        let contentEncoding = codings.isEmpty ? nil : codings.joined(separator: ", ")
        let result = BodyDecoder.decode(body, contentEncoding: contentEncoding)
        if let why = result.reason {
            throw ComposeError(message: "the body does not decode as its Content-Encoding '\(HTTPSyntax.shown(contentEncoding ?? ""))' says "
                               + "(\(HTTPSyntax.shown(why, limit: 120))), so the \(what) cannot be edited as text: \(otherwise)")
        }
        let bytes = result.bytes
        let isText = bytes.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0C }
        guard isText, let text = String(validating: bytes, as: UTF8.self) else {
            throw ComposeError(message: "the body is binary (\(bytes.count) bytes that are not UTF-8 text), so the \(what) cannot be edited as text: \(otherwise)")
        }
        return text
    }
}
