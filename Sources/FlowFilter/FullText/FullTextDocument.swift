import BodyCodec
import Foundation
import ProxyModel

/// The text of a flow that full-text search looks at, field by field: its URL, each message's
/// header lines (`Name: value`), and each message's body as text when it is text.
///
/// One definition for the capture's index (the writer stores these fields) and for searches
/// evaluated in Swift, so both see the same words. A body counts as text when its
/// `Content-Type` is textual (`MediaType.isTextual`), or when it has none and its first bytes
/// read as UTF-8 text (`MediaType.looksLikeText`). It is decoded per `Content-Encoding` first (only when
/// at most `maximumEncodedBody` bytes were captured, and when it decodes to at most
/// `maximumDecodedBody`), and only its first `maximumBodyText` bytes are kept: the index stays
/// a bounded multiple of the traffic, and a body that cannot be decoded is left out rather
/// than indexed as noise. WebSocket messages are not indexed.
public struct FullTextDocument: Sendable, Equatable {
    /// Bytes of text kept per body.
    public static let maximumBodyText = 64 << 10
    /// A compressed body is decoded only when at most this much of it was captured…
    public static let maximumEncodedBody = 256 << 10
    /// …and only when it decodes to at most this much: the writer decodes it, and a stream of
    /// compression bombs must not slow the capture (a 1 MiB inflate is about a millisecond).
    public static let maximumDecodedBody = 1 << 20

    public var url: String
    public var requestHeaders: String
    public var requestBody: String
    public var responseHeaders: String
    public var responseBody: String

    public init(url: String, requestHeaders: String, requestBody: String, responseHeaders: String, responseBody: String) {
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
    }

    /// The document of `flow`. A spooled body is read back from its spool (its first part only
    /// when it needs no decoding): call it before the spool is claimed. With `readingSpools`
    /// false (a filter on a live flow, on an event loop) a spooled body counts as no text: reading
    /// it would wait for the disk.
    public init(_ flow: borrowing Flow, readingSpools: Bool = true) {
        url = flow.url
        requestHeaders = Self.lines(flow.requestHeaders)
        responseHeaders = Self.lines(flow.responseHeaders)
        requestBody = !readingSpools && flow.requestBody.spool != nil ? ""
            : Self.text(of: flow.requestBody, headers: flow.requestHeaders)
        responseBody = !readingSpools && flow.responseBody.spool != nil ? ""
            : Self.text(of: flow.responseBody, headers: flow.responseHeaders)
    }

    public subscript(field: FullTextField) -> String {
        switch field {
        case .url: return url
        case .requestHeaders: return requestHeaders
        case .requestBody: return requestBody
        case .responseHeaders: return responseHeaders
        case .responseBody: return responseBody
        }
    }

    /// Each field's words, for `FullTextQuery.matches`.
    public struct Words: Sendable {
        private var words: [FullTextField: [String]]

        public init(_ document: FullTextDocument) {
            words = Dictionary(uniqueKeysWithValues: FullTextField.allCases.map { ($0, FullTextTokenizer.words(document[$0])) })
        }

        public subscript(field: FullTextField) -> [String] { words[field] ?? [] }
    }

    /// `Name: value` lines, built in one buffer of the exact size: the capture writer makes two
    /// of these per flow, and appending the pieces to a `String` one by one cost seven times as
    /// much (0.9 µs against 0.13 for nine headers).
    static func lines(_ headers: [HeaderField]) -> String {
        let count = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 3 }
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var offset = 0
            func put(_ text: String) {
                offset += UnsafeMutableBufferPointer(rebasing: buffer[offset...]).initialize(from: text.utf8).1
            }
            for field in headers {
                put(field.name)
                buffer[offset] = UInt8(ascii: ":")
                buffer[offset + 1] = UInt8(ascii: " ")
                offset += 2
                put(field.value)
                buffer[offset] = UInt8(ascii: "\n")
                offset += 1
            }
            return offset
        }
    }

    /// The body's text, or "" when it is not text (or cannot be decoded within the bounds).
    static func text(of body: CapturedBody, headers: [HeaderField]) -> String {
        guard body.storedCount > 0 else { return "" }
        let contentType = headers.first(named: "Content-Type")
        if let contentType, !MediaType(contentType).isTextual { return "" }
        var bytes: [UInt8]
        if let encoding = headers.first(named: "Content-Encoding"),
           !encoding.trimmingCharacters(in: .whitespaces).isEmpty,
           encoding.trimmingCharacters(in: .whitespaces).lowercased() != "identity" {
            guard body.storedCount <= maximumEncodedBody,
                  case .decoded(let decoded) = BodyDecoder.decode([UInt8](body.bytes), contentEncoding: encoding,
                                                                  limit: maximumDecodedBody)
            else { return "" }
            bytes = decoded.count > maximumBodyText ? Array(decoded.prefix(maximumBodyText)) : decoded
        } else {
            bytes = [UInt8](body.prefix(maximumBodyText))
        }
        if contentType == nil, !MediaType.looksLikeText(bytes) { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }
}
