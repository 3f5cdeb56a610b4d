import Foundation
import ProxyModel

/// Converts `Flow.appliedRules` to and from the `rules` column: NULL when no rule acted on the
/// flow, else a JSON array of the names in order, `["Block ads","staging"]`.
///
/// It reuses the header JSON's escaper and reader (`JSONStringEscaper` with the `.required`
/// policy, `HeaderFieldsJSONParser`), so the store has one way to write a JSON string. Reading never
/// throws: a value that is not an array of strings (written by hand with `sqlite3`, say) reads as
/// no rules. The filter's SQL function `proxyapp_rules_regexp` reads through `decode` too, so SQL
/// and Swift see the same names.
package enum AppliedRulesJSON {
    /// The column value for `names`: nil (NULL) when there are none.
    package static func encode(_ names: [String]) -> String? {
        if names.isEmpty { return nil }
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(names.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, name) in names.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONStringEscaper.appendQuoted(name, to: &out, policy: .required)
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The names in a column value; empty for NULL and for anything but an array of strings.
    package static func decode(_ text: String?) -> [String] {
        guard let text else { return [] }
        if let names = HeaderFieldsJSONParser.parseStrings(text) { return names }
        return (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }
}
