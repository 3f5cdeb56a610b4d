import ProxyModel

/// `application/x-www-form-urlencoded` bodies as lines: `name: value` per field, in order.
///
/// Percent-escapes are decoded and `+` is a space (the form encoding, unlike URL paths); a
/// malformed escape (`%zz`, a `%` at the end) is kept as written rather than rejected, since
/// the view shows what was sent. Decoded bytes that are not UTF-8 become U+FFFD, tabs spaces.
enum FormFields {
    static func lines(_ body: [UInt8]) -> [String] {
        guard !body.isEmpty else { return [] }
        return PercentDecoding.formPairs(body).map { field in
            let line: String
            if let value = field.value {
                line = "\(PercentDecoding.formDecoded(field.name)): \(PercentDecoding.formDecoded(value))"
            } else {
                line = PercentDecoding.formDecoded(field.name)
            }
            return line.utf8.contains(UInt8(ascii: "\t")) ? TextLineIndex.expandingTabs(line) : line
        }
    }
}
