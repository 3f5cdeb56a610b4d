/// How an HTTP/1.1 message body is delimited on the wire (RFC 9112 §6.3).
///
/// The proxy decides this once per message from what its parser read, and writes exactly one
/// framing header of its own on the next hop: it never forwards `Content-Length` or
/// `Transfer-Encoding` as received. Two parsers that disagree on where a body ends are how
/// request smuggling happens; deciding here, in one place, is how it cannot.
public enum BodyFraming: Hashable, Sendable {
    /// The message has no body.
    case none
    /// Exactly this many bytes follow the head.
    case contentLength(Int64)
    /// `Transfer-Encoding: chunked`, and nothing else.
    case chunked
    /// The body runs until the connection closes (responses only).
    case untilClose

    /// The framing header the next hop gets for this body, if any.
    public var header: (name: String, value: String)? {
        switch self {
        case .contentLength(let length): return ("Content-Length", String(length))
        case .chunked: return ("Transfer-Encoding", "chunked")
        case .none, .untilClose: return nil
        }
    }
}

/// A message the proxy refuses to forward because its framing is ambiguous or unsupported.
public struct FramingRefusal: Error, Equatable, Sendable {
    /// 400 for a malformed request, 501 for a transfer coding the proxy does not relay, 502 for a
    /// response the origin framed that way.
    public var statusCode: Int
    /// One line, in words, naming what is wrong.
    public var reason: String

    public init(statusCode: Int, reason: String) {
        self.statusCode = statusCode
        self.reason = reason
    }
}

/// What one pass over a message's header fields found about its framing.
///
/// Names are compared by length first, so the pass costs a few integer comparisons for the
/// headers that are not `Content-Length` or `Transfer-Encoding`. The pass itself is inlinable:
/// specialized where the engine hands over NIO's header list, it iterates that list directly
/// (unspecialized, every field came through the generic iterator's witnesses: 1 % of the event
/// loops' time for this scan alone); only framing fields reach `add`.
@usableFromInline
struct FramingFields {
    private(set) var transferCodings: [Substring] = []
    private(set) var transferEncodingHeaders = 0
    private(set) var contentLengthHeaders = 0
    /// The one Content-Length value: a single header holding only digits (OWS around them
    /// allowed), at most 18 of them. nil for lists (`5, 5`), signs, several headers and
    /// anything else, and when there is none.
    private(set) var contentLength: Int64?
    /// Each framing header is spelled exactly as the proxy would write it: at most one of
    /// `Content-Length` with plain digits and `Transfer-Encoding: chunked`.
    private(set) var isCanonical = true
    /// The last Content-Length value seen, judged by `finish`.
    private var lengthText: String?

    @inlinable
    init<Fields: Sequence>(_ fields: Fields) where Fields.Element == (name: String, value: String) {
        self.init()
        for (name, value) in fields where Self.mayBeFraming(name) {
            add(name: name, value: value)
        }
        finish()
    }

    @usableFromInline
    init() {}

    /// `Content-Length` and `Transfer-Encoding` are 14 and 17 bytes long.
    @inlinable
    static func mayBeFraming(_ name: String) -> Bool {
        let count = name.utf8.count
        return count == 14 || count == 17
    }

    @usableFromInline
    mutating func add(name: String, value: String) {
        switch name.utf8.count {
        case 14 where name.equalsIgnoringASCIICase("content-length"):
            contentLengthHeaders += 1
            lengthText = value
        case 17 where name.equalsIgnoringASCIICase("transfer-encoding"):
            transferEncodingHeaders += 1
            if value != "chunked" { isCanonical = false }
            for element in value.split(separator: ",") {
                let token = element.trimmingWhitespace()
                if !token.isEmpty { transferCodings.append(token) }
            }
        default:
            break
        }
    }

    @usableFromInline
    mutating func finish() {
        if contentLengthHeaders + transferEncodingHeaders > 1 { isCanonical = false }
        if contentLengthHeaders == 1, let lengthText {
            let digits = Substring(lengthText).trimmingWhitespace()
            if !digits.isEmpty, digits.utf8.count <= 18,
               digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
               let value = Int64(digits) {
                contentLength = value
                // Canonical: digits only, no leading zero (checked without printing the number).
                if digits.utf8.count != lengthText.utf8.count
                    || (digits.utf8.count > 1 && digits.utf8.first == UInt8(ascii: "0")) {
                    isCanonical = false
                }
            }
        }
    }

    var hasTransferEncoding: Bool { transferEncodingHeaders > 0 }
    var hasContentLength: Bool { contentLengthHeaders > 0 }

    /// Whether the codings are exactly `chunked` (any case: coding names are case-insensitive).
    var isChunkedOnly: Bool {
        transferCodings.count == 1 && String(transferCodings[0]).equalsIgnoringASCIICase("chunked")
    }

    /// The refusal of a Content-Length that is not one decimal number, from `sender`.
    func invalidLength(status: Int, sender: String) -> FramingRefusal {
        FramingRefusal(statusCode: status, reason: contentLengthHeaders > 1 ? "\(sender) has more than one Content-Length"
            : "\(sender) has an invalid Content-Length (one decimal number expected)")
    }

    /// The codings as the sender wrote them, for a refusal's message.
    var codingsText: String {
        transferCodings.isEmpty ? "(empty)" : transferCodings.joined(separator: ", ")
    }
}
