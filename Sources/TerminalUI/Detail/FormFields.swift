/// `application/x-www-form-urlencoded` bodies as lines: `name: value` per field, in order.
///
/// Percent-escapes are decoded and `+` is a space (the form encoding, unlike URL paths); a
/// malformed escape (`%zz`, a `%` at the end) is kept as written rather than rejected, since
/// the view shows what was sent. Decoded bytes that are not UTF-8 become U+FFFD, tabs spaces.
enum FormFields {
    static func lines(_ body: [UInt8]) -> [String] {
        guard !body.isEmpty else { return [] }
        return body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { field in
            let line: String
            if let equals = field.firstIndex(of: UInt8(ascii: "=")) {
                line = "\(decode(field[field.startIndex..<equals])): \(decode(field[(equals + 1)...]))"
            } else {
                line = decode(field)
            }
            return line.utf8.contains(UInt8(ascii: "\t")) ? TextLineIndex.expandingTabs(line) : line
        }
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
                continue
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
