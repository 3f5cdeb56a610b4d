import Foundation
import ProxyModel

/// Converts an ordered header list to and from the JSON stored in the `*_headers` columns:
/// an array of `[name, value]` pairs, `[["Host","a.test"],["Accept","*/*"]]`.
///
/// The encoder is hand-written because it runs for every captured flow on the writer thread,
/// which must keep up with tens of thousands of flows per second; `JSONEncoder` costs several
/// times more. Decoding is hand-written too (`HeaderFieldsJSONParser`: exports and the TUI read
/// many rows), with `JSONDecoder` behind it for anything the fast reader does not expect.
enum HeaderFieldsJSON {
    /// The JSON text for `fields`, in order, duplicates kept.
    ///
    /// Escapes `"` and `\`, and every control character below U+0020 (`\b \f \n \r \t`, the
    /// rest as `\u00XX`). Everything else, non-ASCII included, passes through as UTF-8.
    static func encode(_ fields: [HeaderField]) -> String {
        if fields.isEmpty { return "[]" }
        var out: [UInt8] = []
        var estimate = 2
        for field in fields { estimate += field.name.utf8.count + field.value.utf8.count + 8 }
        out.reserveCapacity(estimate)
        out.append(UInt8(ascii: "["))
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            appendString(field.name, to: &out)
            out.append(UInt8(ascii: ","))
            appendString(field.value, to: &out)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses what `encode` wrote (or any JSON array of two-string arrays).
    static func decode(_ text: String) throws -> [HeaderField] {
        if text == "[]" { return [] }
        if let fields = HeaderFieldsJSONParser.parse(text) { return fields }
        let pairs: [[String]]
        do {
            pairs = try JSONDecoder().decode([[String]].self, from: Data(text.utf8))
        } catch {
            throw CaptureStoreError.malformedRow("headers are not an array of string pairs")
        }
        return try pairs.map { pair in
            guard pair.count == 2 else {
                throw CaptureStoreError.malformedRow("a header pair has \(pair.count) elements")
            }
            return HeaderField(name: pair[0], value: pair[1])
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `string` as a quoted JSON string, escaped as `encode` describes (`AppliedRulesJSON` too).
    static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                    continue
                }
                if runStart < index {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
                runStart = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    out.append(UInt8(ascii: "u"))
                    out.append(UInt8(ascii: "0"))
                    out.append(UInt8(ascii: "0"))
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            if runStart < bytes.count {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
