/// `%XX` decoding and `name=value&…` splitting, done once for every place that reads
/// URL-encoded text: HAR query strings and form params (FlowExport), the TUI's form view, and
/// `map_local` directory paths (Rules).
///
/// The callers differ only in policy, so the policy is in the function's name: a form decodes
/// `+` as a space and keeps a malformed escape as written (it shows what was sent); a path keeps
/// `+` and refuses a malformed escape or bytes that are not UTF-8 (it names a file). Everything
/// works on bytes, never on Characters, so a combining mark cannot hide a `%`, `&` or `=`.
public enum PercentDecoding {
    /// The value of one ASCII hex digit (any case); nil for any other byte.
    @inlinable
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// `text` split on `&` (empty pieces dropped, as URLSearchParams does) and at each piece's
    /// first `=`; the pieces are still encoded, and `value` is nil when a piece has no `=`.
    @inlinable
    public static func formPairs<Bytes: Collection>(_ bytes: Bytes)
        -> [(name: Bytes.SubSequence, value: Bytes.SubSequence?)] where Bytes.Element == UInt8
    {
        bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { piece in
            guard let equals = piece.firstIndex(of: UInt8(ascii: "=")) else { return (piece, nil) }
            return (piece[..<equals], piece[piece.index(after: equals)...])
        }
    }

    /// A form field decoded: `+` is a space, a `%` not followed by two hex digits stays as it is,
    /// and decoded bytes that are not UTF-8 become U+FFFD.
    @inlinable
    public static func formDecoded<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(decoding: decoded(bytes, plusIsSpace: true, refuseMalformed: false) ?? [], as: UTF8.self)
    }

    /// `formDecoded` for text: `text` itself when it holds no `%` and no `+`.
    public static func formDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(text)
        }
        return formDecoded(text.utf8)
    }

    /// A path decoded: `+` stays a `+`; nil for a `%` not followed by two hex digits or for
    /// decoded bytes that are not UTF-8.
    public static func pathDecoded(_ text: Substring) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        guard let bytes = decoded(text.utf8, plusIsSpace: false, refuseMalformed: true) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The one decoding loop; nil only when `refuseMalformed` and an escape is malformed.
    /// (Inlinable, as the generic entry points are: specialized in the caller, not dispatched per byte.)
    @inlinable
    static func decoded<Bytes: Collection>(_ bytes: Bytes, plusIsSpace: Bool, refuseMalformed: Bool)
        -> [UInt8]? where Bytes.Element == UInt8
    {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let highIndex = bytes.index(after: index)
                if highIndex != bytes.endIndex, let high = hexValue(bytes[highIndex]) {
                    let lowIndex = bytes.index(after: highIndex)
                    if lowIndex != bytes.endIndex, let low = hexValue(bytes[lowIndex]) {
                        output.append(high << 4 | low)
                        index = bytes.index(after: lowIndex)
                        continue
                    }
                }
                if refuseMalformed { return nil }
                output.append(byte)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
            index = bytes.index(after: index)
        }
        return output
    }
}
