/// A strict HTTP/1.1 request parser written for the tests, independent of NIO's llhttp: what an
/// origin that follows RFC 9112 to the letter finds in the bytes the proxy forwarded.
///
/// It exists for the framing tests. Request smuggling happens when two parsers disagree on
/// where a message ends; checking the proxy's output with the proxy's own parser could not show
/// that. This one accepts only unambiguous framing: CRLF line ends, no obs-fold, header names
/// that are tokens, at most one of `Content-Length` (digits) and `Transfer-Encoding: chunked`
/// (exactly that coding), well-formed chunks. Anything else is an error, never a guess.
public struct StrictRequestParser {
    public struct Request: Equatable, Sendable {
        public var method: String
        public var target: String
        public var version: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        public var trailers: [(name: String, value: String)]

        public static func == (lhs: Request, rhs: Request) -> Bool {
            lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version && lhs.body == rhs.body
                && lhs.headers.elementsEqual(rhs.headers, by: ==) && lhs.trailers.elementsEqual(rhs.trailers, by: ==)
        }

        /// Every value of header `name` (case-insensitive).
        public func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
    }

    public enum Outcome: Equatable, Sendable {
        /// One request and how many bytes it used.
        case request(Request, consumed: Int)
        case needMoreData
        case invalid(String)
    }

    /// Limits that keep a hostile stream from costing the tests memory.
    public static let maxHeadBytes = 64 << 10

    /// Parses the first request in `bytes`.
    public static func parse(_ bytes: [UInt8]) -> Outcome {
        var reader = Reader(bytes: bytes)
        guard let requestLine = reader.line() else {
            return bytes.count > maxHeadBytes ? .invalid("request line too long") : .needMoreData
        }
        if case .invalid(let why) = requestLine { return .invalid(why) }
        guard case .text(let line) = requestLine else { return .needMoreData }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, isToken(parts[0]), !parts[1].isEmpty, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0"
        else { return .invalid("bad request line '\(line)'") }
        guard case .fields(let headers)? = reader.fields() else {
            return reader.failure.map { .invalid($0) } ?? .needMoreData
        }
        let framing: Framing
        switch framingOf(headers) {
        case .success(let value): framing = value
        case .failure(let error): return .invalid(error.description)
        }
        var body: [UInt8] = []
        var trailers: [(name: String, value: String)] = []
        switch framing {
        case .none:
            break
        case .length(let count):
            guard reader.remaining >= count else { return .needMoreData }
            body = reader.take(count)
        case .chunked:
            chunks: while true {
                guard let sizeLine = reader.line() else { return .needMoreData }
                guard case .text(let text) = sizeLine else {
                    if case .invalid(let why) = sizeLine { return .invalid(why) }
                    return .needMoreData
                }
                let sizeText = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
                guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(\.isHexDigit),
                      let size = Int(sizeText, radix: 16) else { return .invalid("bad chunk size '\(text)'") }
                if size == 0 {
                    guard case .fields(let fields)? = reader.fields() else {
                        return reader.failure.map { .invalid($0) } ?? .needMoreData
                    }
                    trailers = fields
                    break chunks
                }
                guard reader.remaining >= size + 2 else { return .needMoreData }
                body += reader.take(size)
                guard reader.take(2) == [13, 10] else { return .invalid("chunk data not followed by CRLF") }
            }
        }
        return .request(Request(method: parts[0], target: parts[1], version: parts[2], headers: headers, body: body,
                                trailers: trailers), consumed: reader.offset)
    }

    /// Every request in `bytes`, in order, and what is left: an error, or a partial request.
    public static func parseAll(_ bytes: [UInt8]) -> (requests: [Request], error: String?, leftover: Int) {
        var requests: [Request] = []
        var offset = 0
        while offset < bytes.count {
            switch parse(Array(bytes[offset...])) {
            case .request(let request, let consumed):
                requests.append(request)
                offset += consumed
            case .needMoreData:
                return (requests, nil, bytes.count - offset)
            case .invalid(let why):
                return (requests, why, bytes.count - offset)
            }
        }
        return (requests, nil, 0)
    }

    // MARK: framing

    enum Framing: Equatable {
        case none, length(Int), chunked
    }

    struct FramingError: Error, CustomStringConvertible {
        var description: String
    }

    static func framingOf(_ headers: [(name: String, value: String)]) -> Result<Framing, FramingError> {
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        let codings = headers.filter { $0.name.lowercased() == "transfer-encoding" }.map(\.value)
        switch (lengths.count, codings.count) {
        case (0, 0):
            return .success(.none)
        case (1, 0):
            let value = lengths[0]
            guard !value.isEmpty, value.count <= 18, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber),
                  let count = Int(value) else { return .failure(FramingError(description: "bad Content-Length '\(value)'")) }
            return .success(.length(count))
        case (0, 1) where codings[0] == "chunked":
            return .success(.chunked)
        default:
            return .failure(FramingError(description: "ambiguous framing: Content-Length \(lengths), Transfer-Encoding \(codings)"))
        }
    }

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    // MARK: reading

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var failure: String?

        enum Line { case text(String), invalid(String) }
        enum Fields { case fields([(name: String, value: String)]) }

        var remaining: Int { bytes.count - offset }

        mutating func take(_ count: Int) -> [UInt8] {
            let slice = Array(bytes[offset..<offset + count])
            offset += count
            return slice
        }

        /// The next CRLF-terminated line; nil when it is not complete yet. A bare CR or LF, NUL
        /// or other control bytes make it invalid.
        mutating func line() -> Line? {
            var index = offset
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 13 {
                    guard index + 1 < bytes.count else { return nil }
                    guard bytes[index + 1] == 10 else { return .invalid("bare CR") }
                    let text = String(decoding: bytes[offset..<index], as: UTF8.self)
                    offset = index + 2
                    return .text(text)
                }
                if byte == 10 { return .invalid("bare LF") }
                if byte == 0 || (byte < 0x20 && byte != 9) || byte == 0x7F { return .invalid("control byte \(byte)") }
                index += 1
            }
            return nil
        }

        /// Header (or trailer) fields up to the empty line; nil when incomplete or invalid
        /// (`failure` says which).
        mutating func fields() -> Fields? {
            var fields: [(name: String, value: String)] = []
            while true {
                guard let next = line() else { return nil }
                switch next {
                case .invalid(let why):
                    failure = why
                    return nil
                case .text(let text):
                    if text.isEmpty { return .fields(fields) }
                    if text.first == " " || text.first == "\t" {
                        failure = "obs-fold"
                        return nil
                    }
                    guard let colon = text.firstIndex(of: ":") else {
                        failure = "header line without a colon"
                        return nil
                    }
                    let name = String(text[..<colon])
                    guard StrictRequestParser.isToken(name) else {
                        failure = "header name '\(name)' is not a token"
                        return nil
                    }
                    let value = text[text.index(after: colon)...].trimmingOWS()
                    fields.append((name, value))
                }
            }
        }
    }
}

private extension Substring {
    /// Without the spaces and tabs around it (optional whitespace, RFC 9110 §5.6.3).
    func trimmingOWS() -> String {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
