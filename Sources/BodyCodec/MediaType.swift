/// What a `Content-Type` value says about a body: whether it is text a reader wants to see (or
/// a rewrite rule may edit) as text, and whether it is a URL-encoded form.
public struct MediaType: Sendable {
    /// The type and subtype in lower case, without parameters (`application/json`).
    public let essence: String

    public init(_ contentType: String) {
        // Byte by byte: the capture writer reads the type of every body it indexes.
        let bytes = contentType.utf8
        var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        var start = bytes.startIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
            start = bytes.index(after: start)
        }
        while end > start {
            let last = bytes[bytes.index(before: end)]
            guard last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") else { break }
            end = bytes.index(before: end)
        }
        let essence = bytes[start..<end]
        if essence.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 }) {
            self.essence = String(contentType[start..<end]).lowercased()
        } else {
            self.essence = String(contentType[start..<end])
        }
    }

    /// `text/*`, JSON, XML, JavaScript, URL-encoded forms and `+json`/`+xml` types. Compared
    /// byte by byte: the capture writer asks it of every body (Foundation's `contains` cost it
    /// microseconds a flow).
    public var isTextual: Bool {
        let bytes = Array(essence.utf8)
        return bytes.starts(with: Self.text) || Self.contains(bytes, Self.json) || Self.contains(bytes, Self.xml)
            || Self.contains(bytes, Self.javascript) || Self.contains(bytes, Self.ecmascript)
            || bytes.elementsEqual(Self.form)
    }

    private static let text = Array("text/".utf8), json = Array("json".utf8), xml = Array("xml".utf8)
    private static let javascript = Array("javascript".utf8), ecmascript = Array("ecmascript".utf8)
    private static let form = Array("application/x-www-form-urlencoded".utf8)

    private static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        for start in 0...(bytes.count - part.count) where bytes[start] == part[0] {
            if bytes[start..<(start + part.count)].elementsEqual(part) { return true }
        }
        return false
    }

    public var isURLEncodedForm: Bool { essence == "application/x-www-form-urlencoded" }

    /// Whether the first 4 KiB read as UTF-8 text: no NUL, no control bytes other than
    /// whitespace and ESC, and no invalid sequence (one cut at the sample's end is allowed). For
    /// a body without a `Content-Type`: the viewer then shows it as text, the index indexes it.
    public static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        let sample = bytes.prefix(4096)
        for byte in sample where byte < 0x20 || byte == 0x7F {
            if !(0x09...0x0D).contains(byte), byte != 0x1B { return false }
        }
        var end = sample.endIndex
        if sample.count < bytes.count {  // the sample may end inside a character: drop that character
            while end > 0, end > sample.count - 3, bytes[end - 1] & 0xC0 == 0x80 { end -= 1 }
            if end > 0, bytes[end - 1] >= 0xC0 { end -= 1 }
        }
        var iterator = bytes[..<end].makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
