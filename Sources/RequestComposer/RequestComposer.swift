/// RequestComposer: requests a person writes or edits, to send through the proxy again.
///
/// Two ways in, both ending in a `ComposedRequest`:
/// - `CurlCommandLine.parse` reads a curl command line as browsers' "Copy as cURL" (Chrome, Firefox)
///   and our own export (`FlowExport.CurlCommand`) write it. It understands POSIX shell quoting
///   (`ShellWords`) but runs nothing: no expansion, no command substitution beyond the two fixed
///   forms our export writes, no file read except through the caller's `readFile`.
/// - `RequestText` renders a request as editor text (request line, headers, blank line, the body
///   decoded for editing) and parses what the person saved, re-encoding the body.
///
/// Framing is the proxy's: `Content-Length` and `Transfer-Encoding` never survive into a
/// `ComposedRequest`. Every refusal is a `ComposeError`: one line in words saying how to fix it,
/// with the line of the input when known. Nothing here does I/O or depends on the engine.
import ProxyModel

/// A request a person wrote or edited, ready to send through the proxy.
///
/// It exists so the composer's two front ends (curl import, editor text) hand the proxy one shape,
/// already checked: an absolute `http`/`https` URL, header names that are HTTP tokens, header values
/// on one line, and a body as it goes on the wire.
public struct ComposedRequest: Sendable, Hashable {
    /// As written (`GET`, `PATCH`, or any other HTTP token; case kept).
    public var method: String
    /// Absolute: `scheme://host[:port]/path?query`, scheme `http` or `https`, no fragment, no user info.
    public var url: String
    /// In order, duplicates kept; never `Content-Length` or `Transfer-Encoding` (the proxy frames).
    public var headers: [HeaderField]
    /// As it goes on the wire: already encoded when a `Content-Encoding` header is kept.
    public var body: [UInt8]
    /// `HTTP/1.1` (the default) or `HTTP/2`.
    public var httpVersion: String
    /// curl's `-k`/`--insecure`: the person asked not to verify the origin's certificate.
    public var insecure: Bool

    public init(method: String, url: String, headers: [HeaderField] = [], body: [UInt8] = [],
                httpVersion: String = "HTTP/1.1", insecure: Bool = false) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.insecure = insecure
    }
}

/// Why a curl command line or an edited request was refused.
///
/// It exists so every front end (CLI, TUI editor loop) can show the reason as it is: `message` is
/// one line in words that says how to fix the input, never a library's error text, and `line`
/// (counted from 1) points into the input when the problem sits on one line.
public struct ComposeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input's line, counted from 1; nil when the problem is not on one line (an empty input).
    public var line: Int?
    public var message: String

    public init(line: Int? = nil, message: String) {
        self.line = line
        self.message = message
    }

    /// `line 3: …` when the line is known, else the message alone.
    public var description: String {
        line.map { "line \($0): \(message)" } ?? message
    }
}
