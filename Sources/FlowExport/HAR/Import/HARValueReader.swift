/// Typed reads of JSON values off a `JSONTokenizer`, with the JSON path of each value kept for
/// error messages: the small decoder the streaming HAR reader is written in.
///
/// It gives the errors `JSONDecoder` gave, with a path: "required field is missing", "expected a
/// string, found a number", "expected an object, found null". A read is strict (a value of
/// another type is an error) or loose (it is skipped and read as absent). Objects are read member
/// by member; of a known field named twice only the first counts, as with `JSONDecoder`; unknown
/// fields are skipped without being held. Strings outside bodies share a budget per entry
/// (`resetBudget`), so no field can make an import hold more than that.
final class HARValueReader {
    typealias Token = JSONTokenizer.Token

    /// Strict: another type is an error. Loose: another type reads as absent.
    enum Strictness {
        case strict, loose
    }

    private enum Step {
        case key(String)
        case index(Int)
    }

    let tokens: JSONTokenizer
    private var path: [Step] = []
    private var budget = 0
    private var budgetLimit = 0

    init(tokens: JSONTokenizer) {
        self.tokens = tokens
    }

    /// Starts a new allowance of `bytes` for the strings (and array elements) read from now on.
    func resetBudget(_ bytes: Int) {
        budget = bytes
        budgetLimit = bytes
    }

    // MARK: Paths and errors

    /// `log.entries[3].request.url`; `$` for the root.
    var currentPath: String { Self.format(path) }

    func within<T>(_ key: String, _ body: () throws -> T) rethrows -> T {
        path.append(.key(key))
        defer { path.removeLast() }
        return try body()
    }

    func within<T>(index: Int, _ body: () throws -> T) rethrows -> T {
        path.append(.index(index))
        defer { path.removeLast() }
        return try body()
    }

    func failure(_ reason: String) -> HARImportError {
        HARImportError(path: currentPath, reason: reason)
    }

    func missing(_ key: String) -> HARImportError {
        HARImportError(path: Self.format(path + [.key(key)]), reason: "required field is missing")
    }

    func mismatch(expected: String, found token: Token) -> HARImportError {
        failure("expected \(expected), found \(Self.describe(token))")
    }

    private static func format(_ path: [Step]) -> String {
        var text = ""
        for step in path {
            switch step {
            case .index(let index): text += "[\(index)]"
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            }
        }
        return text.isEmpty ? "$" : text
    }

    private static func describe(_ token: Token) -> String {
        switch token {
        case .objectStart: return "an object"
        case .arrayStart: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "true or false"
        case .null: return "null"
        case .objectEnd, .arrayEnd, .key, .end: return "something else"
        }
    }

    // MARK: Values

    /// The next value's first token.
    func next() throws -> Token {
        try tokens.next()
    }

    /// Skips a value whose first token was `token`.
    func skip(_ token: Token) throws {
        try tokens.skipValue(startingWith: token)
    }

    func string(_ token: Token, _ strictness: Strictness = .strict) throws -> String? {
        switch token {
        case .string:
            guard let bytes = try tokens.readString(limit: max(0, budget)) else {
                throw failure("more than \(budgetLimit >> 20) MiB of text in one entry outside its bodies")
            }
            budget -= bytes.count
            return String(decoding: bytes, as: UTF8.self)
        case .null:
            return nil
        default:
            return try other(token, strictness, expected: "a string")
        }
    }

    func number(_ token: Token, _ strictness: Strictness = .strict) throws -> Double? {
        switch token {
        case .number: return tokens.number
        case .null: return nil
        default: return try other(token, strictness, expected: "a number")
        }
    }

    func bool(_ token: Token, _ strictness: Strictness = .strict) throws -> Bool? {
        switch token {
        case .bool(let value): return value
        case .null: return nil
        default: return try other(token, strictness, expected: "true or false")
        }
    }

    /// A required value: null is an error too.
    func required<T>(_ token: Token, expected: String, _ read: (Token) throws -> T?) throws -> T {
        guard let value = try read(token) else { throw mismatch(expected: expected, found: token) }
        return value
    }

    /// Reads an object's members: `body` gets each known field's name once (it must read the
    /// value, starting with `next()`); other fields and repeated ones are skipped. False for null.
    func object(_ token: Token, _ strictness: Strictness = .strict, fields known: [String],
                _ body: (String) throws -> Void) throws -> Bool {
        guard token == .objectStart else {
            if token == .null { return false }
            _ = try other(token, strictness, expected: "an object") as Bool?
            return false
        }
        var seen: UInt64 = 0
        while try tokens.next() != .objectEnd {
            let name = try tokens.readString(limit: 64).map { String(decoding: $0, as: UTF8.self) }
            guard let name, let index = known.firstIndex(of: name), seen & (UInt64(1) << index) == 0 else {
                try skip(try tokens.next())
                continue
            }
            seen |= UInt64(1) << index
            try within(name) { try body(name) }
        }
        return true
    }

    /// Reads an array's elements: `body` gets each index and the element's first token. False
    /// for null. Every element costs 64 bytes of the budget (a million empty headers are no HAR),
    /// unless `costsBudget` is false (the entries themselves).
    func array(_ token: Token, _ strictness: Strictness = .strict, costsBudget: Bool = true,
               _ body: (Int, Token) throws -> Void) throws -> Bool {
        guard token == .arrayStart else {
            if token == .null { return false }
            _ = try other(token, strictness, expected: "an array") as Bool?
            return false
        }
        var index = 0
        while true {
            let element = try tokens.next()
            if element == .arrayEnd { return true }
            if costsBudget { budget -= 64 }
            guard budget >= 0 || !costsBudget else {
                throw within(index: index) { failure("more than \(budgetLimit >> 20) MiB of text in one entry outside its bodies") }
            }
            try within(index: index) { try body(index, element) }
            index += 1
        }
    }

    /// A value of another type than expected: an error when strict, skipped and absent when loose.
    private func other<T>(_ token: Token, _ strictness: Strictness, expected: String) throws -> T? {
        guard strictness == .loose else { throw mismatch(expected: expected, found: token) }
        try skip(token)
        return nil
    }
}
