import BodyCodec
import ProxyModel

/// A captured body made ready to show: decoded, classified, and with its lines indexed for
/// every view mode that applies.
///
/// Building one does the work that grows with the body (decompression, the line scan, JSON
/// pretty-printing), so the app builds it on a background queue and the render thread only
/// asks for the few lines on screen. A body that cannot be decoded is shown as captured, with
/// the reason in `summary`.
public struct BodyDocument: Sendable {
    /// JSON larger than this is shown as text: pretty-printing it would take too long to wait for.
    public static let prettyPrintLimit = 8 << 20

    public let detectedMode: BodyViewMode
    public let availableModes: [BodyViewMode]
    /// One line about the body: type, size, encoding, and anything that went wrong.
    public let summary: String
    /// The bytes the views show: decoded when decoding worked, else as captured.
    public var bytes: [UInt8] { storage.bytes }

    private let storage: Storage

    /// Everything computed once, shared by copies of the document.
    private final class Storage: Sendable {
        let bytes: [UInt8]
        let text: TextLineIndex
        let json: TextLineIndex?
        let form: [String]?

        init(bytes: [UInt8], json: TextLineIndex?, form: [String]?) {
            self.bytes = bytes
            text = TextLineIndex(bytes)
            self.json = json
            self.form = form
        }
    }

    /// Decodes `body` by the `Content-Encoding` in `headers` and classifies it by their
    /// `Content-Type` and a sniff of the bytes.
    public init(body: CapturedBody, headers: [HeaderField]) {
        let contentType = FlowRow.essence(of: headers.first(named: "Content-Type") ?? "")
        let contentEncoding = headers.first(named: "Content-Encoding")
        let decoding = BodyDecoder.decode([UInt8](body.bytes), contentEncoding: contentEncoding)
        let bytes = decoding.bytes
        let kind = BodyKind(contentType: contentType)

        var notes: [String] = []
        var json: TextLineIndex?
        if kind == .json || (kind != .form && BodyKind.looksLikeJSON(bytes)) {
            if bytes.count > Self.prettyPrintLimit {
                if kind == .json { notes.append("not pretty-printed: over \(FlowRow.humanSize(Int64(Self.prettyPrintLimit)))") }
            } else if let pretty = JSONReindenter.reindent(bytes) {
                json = TextLineIndex(pretty)
            } else if kind == .json {
                notes.append("not valid JSON")
            }
        }
        let form = kind == .form ? FormFields.lines(bytes) : nil
        storage = Storage(bytes: bytes, json: json, form: form)

        var modes: [BodyViewMode] = []
        if json != nil { modes.append(.json) }
        if form != nil { modes.append(.form) }
        modes += [.text, .hex]
        availableModes = modes
        if let first = modes.first, first != .text {
            detectedMode = first
        } else {
            detectedMode = kind == .text || MediaType.looksLikeText(bytes) ? .text : .hex
        }
        summary = Self.summary(body: body, contentType: contentType, contentEncoding: contentEncoding,
                               decoding: decoding, notes: notes)
    }

    /// The lines of `mode`; a mode this body does not offer falls back to text.
    public func lines(_ mode: BodyViewMode) -> BodyLines {
        switch mode {
        case .json: storage.json.map { BodyLines(.text($0)) } ?? BodyLines(.text(storage.text))
        case .form: storage.form.map { BodyLines(.list($0)) } ?? BodyLines(.text(storage.text))
        case .text: BodyLines(.text(storage.text))
        case .hex: BodyLines(.hex(HexLines(bytes: storage.bytes)))
        }
    }

    /// `application/json · 12.3 KiB (gzip, 48.1 KiB decoded)`, then what went wrong, if anything.
    private static func summary(body: CapturedBody, contentType: String, contentEncoding: String?,
                                decoding: BodyDecoder.Result, notes: [String]) -> String {
        if body.size == 0, body.bytes.isEmpty { return "empty" }
        var parts: [String] = []
        if !contentType.isEmpty { parts.append(contentType) }
        var size = FlowRow.humanSize(max(body.size, Int64(body.bytes.count)))
        let encodings = ContentEncoding.list(from: contentEncoding ?? "").encodings
        if case .decoded(let decoded) = decoding, !encodings.isEmpty {
            let names = encodings.map(\.rawValue).joined(separator: ", ")
            size += " (\(names), \(FlowRow.humanSize(Int64(decoded.count))) decoded)"
        }
        parts.append(size)
        if body.truncated {
            parts.append("truncated: \(FlowRow.humanSize(Int64(body.bytes.count))) of \(FlowRow.humanSize(body.size)) stored")
        }
        if let note = decoding.note { parts.append("decoding failed: \(note)") }
        parts += notes
        return parts.joined(separator: " · ")
    }
}

/// What a body is, as far as choosing its view goes: from the media type, or a sniff.
enum BodyKind: Equatable {
    case json, form, text, other

    init(contentType: String) {
        if contentType == "application/x-www-form-urlencoded" {
            self = .form
        } else if contentType.hasSuffix("/json") || contentType.hasSuffix("+json") {
            self = .json
        } else if contentType.hasPrefix("text/") || contentType.hasSuffix("xml") || contentType.hasSuffix("javascript")
                    || contentType == "application/x-ndjson" || contentType == "application/graphql" {
            self = .text
        } else {
            self = .other
        }
    }

    /// Whether the first byte that is not whitespace opens an object or an array.
    static func looksLikeJSON(_ bytes: [UInt8]) -> Bool {
        let first = bytes.prefix(1024).first { !(0x09...0x0D).contains($0) && $0 != 0x20 }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}
