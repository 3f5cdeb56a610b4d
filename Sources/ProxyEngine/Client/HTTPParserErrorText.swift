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
        case .invalidContentLength: return "invalid Content-Length"
        case .unexpectedContentLength: return "Content-Length where no body is allowed, or beside Transfer-Encoding"
        case .invalidChunkSize: return "invalid chunk size in a chunked body"
        case .invalidConstant: return "malformed message"
        case .invalidInternalState, .strictModeAssertion, .paused, .unknown: return "malformed message"
        }
    }
}
