import Foundation

/// Turns what `JSONDecoder` threw into a `HARImportError` with a JSON path and a reason a user
/// can act on ("expected an array, found an object"), instead of Foundation's type names.
enum HARDecodingFailure {
    static func importError(for error: any Error, in data: Data) -> HARImportError {
        // Foundation checks string contents only when it decodes them, and says only "not valid
        // JSON" for syntax errors: a syntax error anywhere is reported first, with its position.
        if let syntaxError = JSONSyntaxLocator.firstError(in: [UInt8](data)) {
            return HARImportError(path: "$", reason: "not valid JSON: \(syntaxError)")
        }
        guard let decodingError = error as? Swift.DecodingError else {
            return HARImportError(path: "$", reason: "\(error)")
        }
        switch decodingError {
        case .keyNotFound(let key, let context):
            return HARImportError(path: path(context.codingPath + [key]), reason: "required field is missing")
        case .valueNotFound(let type, let context):
            return HARImportError(path: path(context.codingPath), reason: "expected \(expected(type)), found null")
        case .typeMismatch(let type, let context):
            let found = JSONValueKind.describe(at: context.codingPath, in: data)
            return HARImportError(path: path(context.codingPath), reason: "expected \(expected(type)), found \(found)")
        case .dataCorrupted(let context):
            return HARImportError(path: path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return HARImportError(path: "$", reason: "\(decodingError)")
        }
    }

    /// `log.entries[3].request.url`; `$` for the root.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "$" : text
    }

    /// What a Decodable type looks like in JSON, for "expected …".
    private static func expected(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Array<") || name.hasPrefix("[") && !name.contains(":") { return "an array" }
        switch name {
        case "String": return "a string"
        case "Bool": return "true or false"
        case "Double", "Float", "Int", "Int64", "UInt", "Int32": return "a number"
        default: return "an object"
        }
    }
}
