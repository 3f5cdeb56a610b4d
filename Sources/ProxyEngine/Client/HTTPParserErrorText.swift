import NIOHTTP1

/// What NIO's HTTP parser refused, in words for a one-line answer or flow error: the enum's own
/// names (`invalidChunkSize`) are the library's internal text, not a reason a user can act on.
extension HTTPParserError {
    var reason: String {
        switch self {
        case .invalidCharactersUsed: return "invalid characters in the message"
        case .trailingGarbage: return "unexpected bytes after the message"
        case .invalidEOFState: return "the connection ended in the middle of the message"
        case .headerOverflow: return "header section too large"
        case .closedConnection: return "data after the connection was closed"
        case .invalidVersion: return "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)"
        case .invalidStatus: return "invalid status line"
        case .invalidMethod: return "invalid method"
        case .invalidURL, .invalidHost, .invalidPort, .invalidPath, .invalidQueryString, .invalidFragment:
            return "invalid request target"
        case .lfExpected: return "a line did not end with CRLF"
        case .invalidHeaderToken: return "invalid header field (name, value or line folding)"
        // llhttp's own reasons behind each code (NIO keeps only the code): "Duplicate
        // Content-Length"; "Invalid character in Content-Length", "Content-Length overflow",
        // "Content-Length can't be present with Transfer-Encoding"; "Invalid `Transfer-Encoding`
        // header value", "Transfer-Encoding can't be present with Content-Length" and "Missing
        // expected CR" (both `.unknown`); "Invalid character in chunk extensions", "Expected LF
        // after …" (`.strictModeAssertion`); "Expected HTTP/" (`.invalidConstant`); an HTTP/2
        // preface pauses the parser (`.paused`).
        case .invalidContentLength:
            return "invalid Content-Length (one decimal number, never beside Transfer-Encoding or in trailers)"
        case .unexpectedContentLength: return "more than one Content-Length"
        case .unknown:
            return "invalid Transfer-Encoding ('chunked' once and last, never beside Content-Length), or a line without CR"
        case .strictModeAssertion: return "invalid chunk extension, or a line that does not end with CRLF"
        case .invalidChunkSize: return "invalid chunk size in a chunked body"
        case .invalidConstant: return "not an HTTP/1.x message (its first line must name HTTP/1.0 or HTTP/1.1)"
        case .paused: return "an HTTP/2 connection preface: ProxyApp speaks HTTP/1.1 (and 1.0) only"
        case .invalidInternalState: return "malformed message"
        }
    }
}
