/// A `Content-Encoding` a captured body may carry; the order of a header's list is the order the
/// sender applied them, so decoding runs it backwards.
public enum ContentEncoding: String, Sendable, Hashable, CaseIterable {
    case gzip
    case deflate
    case br
    case zstd

    /// Parses a `Content-Encoding` header value (`gzip`, `x-gzip`, `gzip, br`); `identity` and
    /// empty entries are dropped. Unknown names come back in `unknown`.
    public static func list(from header: String) -> (encodings: [ContentEncoding], unknown: [String]) {
        var encodings: [ContentEncoding] = []
        var unknown: [String] = []
        for part in header.split(separator: ",") {
            let name = part.trimmingSpaces().lowercased()
            switch name {
            case "", "identity": continue
            case "x-gzip": encodings.append(.gzip)
            default:
                if let encoding = ContentEncoding(rawValue: name) {
                    encodings.append(encoding)
                } else {
                    unknown.append(name)
                }
            }
        }
        return (encodings, unknown)
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
