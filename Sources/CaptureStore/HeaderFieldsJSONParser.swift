import ProxyModel

/// A hand-written reader for the header JSON `HeaderFieldsJSON.encode` writes
/// (`[["Host","a.test"],["Accept","*/*"]]`, whitespace allowed, every JSON string escape), and
/// for the `rules` column's plain array of strings (`AppliedRulesJSON`).
///
/// It exists for speed: reading flows back (export, the TUI) decodes two header lists per row,
/// and `JSONDecoder` spent a third of a HAR export there. It returns nil on anything it does not
/// expect, and `HeaderFieldsJSON.decode` then falls back to `JSONDecoder`, so a valid document is
/// never refused and a malformed one gets the same error either way.
struct HeaderFieldsJSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The pairs in `text`, or nil when it is not exactly an array of two-string arrays.
    static func parse(_ text: String) -> [HeaderField]? {
        var text = text
        return text.withUTF8 { bytes in
            var parser = HeaderFieldsJSONParser(bytes)
            return parser.document()
        }
    }

    /// The strings in `text`, or nil when it is not exactly an array of strings.
    static func parseStrings(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes in
            var parser = HeaderFieldsJSONParser(bytes)
            return parser.stringArray()
        }
    }

    private mutating func stringArray() -> [String]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var strings: [String] = []
        if consume(UInt8(ascii: "]")) { return atEnd() ? strings : nil }
        repeat {
            guard let string = string() else { return nil }
            strings.append(string)
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "]")) else { return nil }
        return atEnd() ? strings : nil
    }

    private mutating func document() -> [HeaderField]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var fields: [HeaderField] = []
        if consume(UInt8(ascii: "]")) { return atEnd() ? fields : nil }
        repeat {
            guard consume(UInt8(ascii: "[")), let name = string(), consume(UInt8(ascii: ",")),
                  let value = string(), consume(UInt8(ascii: "]"))
            else { return nil }
            fields.append(HeaderField(name: name, value: value))
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "]")) else { return nil }
        return atEnd() ? fields : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Skips whitespace, then takes `byte` if it comes next.
    private mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// A JSON string starting at the next non-space byte; nil when malformed.
    private mutating func string() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        // The common case: no escape before the closing quote; one copy, straight from the row.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard unescape(into: &out) else { return nil }
            case 0..<0x20:
                return nil  // raw control characters are not allowed inside JSON strings
            default:
                out.append(byte)
            }
        }
        return nil
    }

    /// One escape sequence after its backslash, appended as UTF-8.
    private mutating func unescape(into out: inout [UInt8]) -> Bool {
        guard index < bytes.count else { return false }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            guard var scalar = hex4() else { return false }
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by `\u` and a low one.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { return false }
                index += 2
                guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return false }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                return false
            }
            guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else { return false }
            out.append(contentsOf: encoded)
        default:
            return false
        }
        return true
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            guard let digit = PercentDecoding.hexValue(byte) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
