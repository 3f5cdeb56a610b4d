import Foundation

/// The differences between two parsed JSON values (from `JSONSerialization`), one readable line
/// per differing leaf: `request.headers[2].value: "a" ≠ "b"`.
///
/// Tests compare whole documents with `NSDictionary` equality and print this on failure, so a
/// mismatch deep inside a HAR entry names its field instead of dumping two entries.
enum JSONDifference {
    /// - Parameter ignoring: top-level keys of two objects to leave out (fields that may differ).
    static func lines(_ lhs: Any, _ rhs: Any, path: String = "", ignoring: Set<String> = []) -> [String] {
        switch (lhs, rhs) {
        case let (left as [String: Any], right as [String: Any]):
            var lines: [String] = []
            for key in Set(left.keys).union(right.keys).subtracting(ignoring).sorted() {
                let child = path.isEmpty ? key : "\(path).\(key)"
                switch (left[key], right[key]) {
                case let (l?, r?): lines += Self.lines(l, r, path: child)
                case let (l?, nil): lines.append("\(child): \(describe(l)) ≠ (absent)")
                case let (nil, r?): lines.append("\(child): (absent) ≠ \(describe(r))")
                case (nil, nil): break
                }
            }
            return lines
        case let (left as [Any], right as [Any]):
            var lines: [String] = []
            if left.count != right.count {
                lines.append("\(path): \(left.count) elements ≠ \(right.count) elements")
            }
            for index in 0..<min(left.count, right.count) {
                lines += Self.lines(left[index], right[index], path: "\(path)[\(index)]")
            }
            return lines
        default:
            return json(lhs) == json(rhs) ? [] : ["\(path): \(describe(lhs)) ≠ \(describe(rhs))"]
        }
    }

    /// A leaf as JSON text. Comparing leaves as Foundation objects misreports on Linux, where a
    /// parsed `true` bridges to a different object inside a fresh array than inside the document.
    private static func json(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
    }

    /// Strings quoted and cut at 200 characters; numbers and the rest as JSON would show them.
    private static func describe(_ value: Any) -> String {
        if let text = value as? String {
            return text.count > 200 ? "\"\(text.prefix(200))…\" (\(text.count) characters)" : "\"\(text)\""
        }
        if value is [String: Any] || value is [Any],
           let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) {
            let text = String(decoding: data, as: UTF8.self)
            return text.count > 200 ? "\(text.prefix(200))…" : text
        }
        return "\(value)"
    }
}
