import BodyCodec
import ProxyModel

/// A request as text a person edits in their editor, and back: the composer's editing format.
///
/// It exists so a captured or imported request can be changed with any editor and sent again.
/// The text is HTTP/1.1's own shape, so it reads as what goes on the wire:
///
/// ```
/// # error from the last attempt (comments first, each line "# ")
/// POST https://api.example.com/items HTTP/1.1
/// Content-Type: application/json
/// Content-Encoding: gzip
///
/// {"name":"pen"}
/// ```
///
/// Rules (`render` writes text `parse` reads back to the same request):
/// - The request line holds an absolute URL, or an origin-form path (`/items`) when the caller
///   gives `defaultOrigin` (the CLI's `--to URL`); the version is `HTTP/1.1` (the default) or `HTTP/2`.
/// - `Content-Length` and `Transfer-Encoding` are neither shown nor kept: the proxy frames the body.
/// - The body is shown decoded (`gzip`, `deflate`, `br`, `zstd`) and encoded again on parse per the
///   `Content-Encoding` kept in the text (removing the header sends it unencoded); an unknown coding
///   is refused.
/// - A body that is not text is refused, never shown altered: bytes that are not UTF-8, or control
///   bytes other than tab, LF, CR and form feed (NUL included), could not survive an editor. Such a
///   request is sent again unchanged, or imported with `curl --data-binary @file`.
/// - Trailing newline: editors end a file with a line end, so the body is everything after the
///   blank line except one final line end: `\r\n` when the header lines end in CRLF, else `\n`.
///   `render` always writes that line end after a non-empty body, so a body ending in a newline
///   keeps it, and a file saved without one changes nothing.
/// - Line ends of the head may be LF or CRLF; the body's bytes, CRs included, are kept as written.
public enum RequestText {
    /// The editor text for a request; throws when it cannot be shown as editable text (see the
    /// rules above: a binary body, a body that does not decode, a header that is not one line).
    public static func render(method: String, url: String, httpVersion: String, headers: [HeaderField], body: [UInt8],
                              comments: [String]) throws -> String {
        var text = MessageText.comments(comments)
        guard HTTPSyntax.isToken(method) else {
            throw ComposeError(message: "the method '\(HTTPSyntax.shown(method))' is not an HTTP token, so the request cannot be edited as text")
        }
        guard !url.isEmpty, url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw ComposeError(message: "the URL '\(HTTPSyntax.shown(url))' holds spaces or control characters, so the request cannot be edited as text")
        }
        text += method + " " + url + " " + renderedVersion(httpVersion) + "\n"
        text += try MessageText.headersAndBody(headers: headers, body: body, what: "request",
                                               otherwise: "send it unchanged, or import it with curl --data-binary @file")
        return text
    }

    /// Parses what the person saved (the rules above); `defaultOrigin` (`https://example.com`)
    /// completes an origin-form request line.
    public static func parse(_ text: String, defaultOrigin: String?) throws -> ComposedRequest {
        var parser = RequestTextParser(text: text, defaultOrigin: defaultOrigin)
        return try parser.parse()
    }

    /// `HTTP/2` for HTTP/2 (and `HTTP/2.0`), else `HTTP/1.1`: the versions a composed request is sent with.
    private static func renderedVersion(_ version: String) -> String {
        let upper = version.uppercased()
        return upper == "HTTP/2" || upper == "HTTP/2.0" ? "HTTP/2" : "HTTP/1.1"
    }
}
