import Foundation
import ProxyModel

/// Converts an ordered header list to and from the JSON stored in the `*_headers` columns:
/// an array of `[name, value]` pairs, `[["Host","a.test"],["Accept","*/*"]]`.
///
/// The encoder is hand-written because it runs for every captured flow on the writer thread,
/// which must keep up with tens of thousands of flows per second; `JSONEncoder` costs several
/// times more. Decoding is hand-written too (`HeaderFieldsJSONParser`: exports and the TUI read
/// many rows), with `JSONDecoder` behind it for anything the fast reader does not expect.
package enum HeaderFieldsJSON {
    /// The JSON text for `fields`, in order, duplicates kept.
    ///
    /// Strings escaped by `JSONStringEscaper`'s `.required` policy: `"`, `\` and controls below
    /// U+0020; everything else, non-ASCII included, passes through as UTF-8.
    package static func encode(_ fields: [HeaderField]) -> String {
        if fields.isEmpty { return "[]" }
        var out: [UInt8] = []
        append(fields, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text for `fields` to `out`, as `encode` spells it: the capture writer
    /// writes it straight into the row's text (`SQLiteTextArena.add(at:of:writing:)`).
    package static func append(_ fields: [HeaderField], to out: inout [UInt8]) {
        var estimate = 2
        for field in fields { estimate += field.name.utf8.count + field.value.utf8.count + 8 }
        out.reserveCapacity(out.count + estimate)
        out.append(UInt8(ascii: "["))
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            JSONStringEscaper.appendQuoted(field.name, to: &out, policy: .required)
            out.append(UInt8(ascii: ","))
            JSONStringEscaper.appendQuoted(field.value, to: &out, policy: .required)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Parses what `encode` wrote (or any JSON array of two-string arrays).
    package static func decode(_ text: String) throws -> [HeaderField] {
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
}
