/// A JSON syntax error, placed: "unexpected '<' at line 1, column 1, expected a value".
struct JSONSyntaxError: Error, Equatable {
    let message: String
}

/// Reads JSON one token at a time from a `HARByteSource`, checking the syntax as it goes, so a
/// HAR file of any size is imported with memory for one entry, never the whole document.
///
/// `JSONDecoder` needs the whole document in memory (1.3 GB of RSS for a 384 MB HAR) and says only
/// "not valid JSON" for a syntax error; this reader holds a 64 KiB window and says where the
/// error is (line and byte column). Nesting costs an entry in `open` per level, never a call
/// frame, and is refused beyond 512 levels (as `JSONDecoder` does). Strings are not read by
/// `next()`: after `.key` or `.string` the caller reads the content with `readString(limit:)`
/// or `readString(into:)`, or leaves it to be skipped, so a 300 MB body string is streamed.
final class JSONTokenizer {
    enum Token: Equatable {
        case objectStart, objectEnd, arrayStart, arrayEnd
        /// A member name; its content is read next (`readString`).
        case key
        /// A string value; its content is read next (`readString`) or skipped.
        case string
        /// A number; its value is `number`.
        case number
        case bool(Bool)
        case null
        /// The document ended (only whitespace followed it).
        case end
    }

    static let maximumDepth = 512
    /// Longer numbers are refused: no HAR needs them, and they would have to be held whole.
    static let maximumNumberLength = 400

    /// What the next token may be.
    private enum Expectation {
        case value, valueOrArrayEnd, keyOrObjectEnd, key, colon, commaOrEnd, endOfDocument
    }

    let input: JSONInput
    /// `{` or `[` for each open container.
    private(set) var open: [UInt8] = []
    private var expectation = Expectation.value
    /// A string whose content the caller has not read yet (it is skipped by the next `next()`).
    var stringPending = false
    /// The value of the last `.number` token.
    private(set) var number: Double = 0
    private var numberText: [UInt8] = []

    init(source: any HARByteSource) {
        input = JSONInput(source: source)
        numberText.reserveCapacity(32)
    }

    /// The next token; after `.end` the document is complete and valid.
    func next() throws -> Token {
        if stringPending { try skipString() }
        switch expectation {
        case .value:
            return try value()
        case .valueOrArrayEnd:
            try skipSpace()
            if try input.peek() == UInt8(ascii: "]") { return closeContainer() }
            return try value()
        case .keyOrObjectEnd:
            try skipSpace()
            if try input.peek() == UInt8(ascii: "}") { return closeContainer() }
            return try key()
        case .key:
            return try key()
        case .colon:
            try skipSpace()
            guard let byte = try input.peek() else { throw endOfFile() }
            guard byte == UInt8(ascii: ":") else { throw unexpected("':'") }
            input.advance()
            return try value()
        case .commaOrEnd:
            try skipSpace()
            let container = open[open.count - 1]
            let isObject = container == UInt8(ascii: "{")
            guard let byte = try input.peek() else { throw endOfFile() }
            if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) { return closeContainer() }
            guard byte == UInt8(ascii: ",") else { throw unexpected(isObject ? "',' or '}'" : "',' or ']'") }
            input.advance()
            return isObject ? try key() : try value()
        case .endOfDocument:
            try skipSpace()
            guard try input.peek() == nil else { throw unexpected("the end of the file") }
            return .end
        }
    }

    /// Skips the rest of a value whose first token was `first` (a container to its end).
    func skipValue(startingWith first: Token) throws {
        guard first == .objectStart || first == .arrayStart else { return }
        let depth = open.count - 1
        while open.count > depth { _ = try next() }
    }

    /// Reads tokens to the end of the document; returns the first syntax error, nil when the
    /// rest is valid. Used after a problem with the content was found, so that a syntax error
    /// anywhere in the file is what gets reported, as it always was.
    func firstSyntaxErrorInRest() throws(HARReadError) -> JSONSyntaxError? {
        do {
            while try next() != .end {}
            return nil
        } catch let error as JSONSyntaxError {
            return error
        } catch let error as HARReadError {
            throw error
        } catch {
            return nil
        }
    }

    // MARK: Values

    private func value() throws -> Token {
        try skipSpace()
        guard let byte = try input.peek() else { throw endOfFile() }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard open.count < Self.maximumDepth else {
                throw JSONSyntaxError(message: "nesting deeper than \(Self.maximumDepth) levels at \(input.location())")
            }
            input.advance()
            open.append(byte)
            if byte == UInt8(ascii: "{") {
                expectation = .keyOrObjectEnd
                return .objectStart
            }
            expectation = .valueOrArrayEnd
            return .arrayStart
        case UInt8(ascii: "\""):
            input.advance()
            stringPending = true
            valueEnded()
            return .string
        case UInt8(ascii: "t"):
            try literal("true")
            valueEnded()
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            valueEnded()
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            valueEnded()
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try readNumber()
            valueEnded()
            return .number
        default:
            throw unexpected("a value")
        }
    }

    private func key() throws -> Token {
        try skipSpace()
        guard let byte = try input.peek() else { throw endOfFile() }
        guard byte == UInt8(ascii: "\"") else { throw unexpected("a field name in double quotes") }
        input.advance()
        stringPending = true
        expectation = .colon
        return .key
    }

    private func closeContainer() -> Token {
        input.advance()
        let closed = open.removeLast()
        valueEnded()
        return closed == UInt8(ascii: "{") ? .objectEnd : .arrayEnd
    }

    private func valueEnded() {
        expectation = open.isEmpty ? .endOfDocument : .commaOrEnd
    }

    private func literal(_ word: StaticString) throws {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in bytes {
            guard let byte = try input.peek() else { throw endOfFile() }
            guard byte == expected else { throw unexpected("'\(word)'") }
            input.advance()
        }
    }

    /// RFC 8259's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private func readNumber() throws {
        numberText.removeAll(keepingCapacity: true)
        if try input.peek() == UInt8(ascii: "-") { try take() }
        guard let first = try input.peek(), isDigit(first) else { throw unexpected("a digit") }
        if first == UInt8(ascii: "0") { try take() } else { try digits() }
        if try input.peek() == UInt8(ascii: ".") {
            try take()
            guard let byte = try input.peek(), isDigit(byte) else { throw unexpected("a digit") }
            try digits()
        }
        if let byte = try input.peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            try take()
            if let sign = try input.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { try take() }
            guard let byte = try input.peek(), isDigit(byte) else { throw unexpected("a digit") }
            try digits()
        }
        let text = String(decoding: numberText, as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(message: "the number \(text) is out of range at \(input.location())")
        }
        number = value
    }

    private func digits() throws {
        while let byte = try input.peek(), isDigit(byte) { try take() }
    }

    private func take() throws {
        guard numberText.count < Self.maximumNumberLength else {
            throw JSONSyntaxError(message: "a number longer than \(Self.maximumNumberLength) characters at \(input.location())")
        }
        numberText.append(try input.peek()!)
        input.advance()
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func skipSpace() throws {
        try input.skipWhitespace()
    }

    // MARK: Errors

    func unexpected(_ expected: String) -> JSONSyntaxError {
        let byte = (try? input.peek()) ?? nil
        let shown = byte.map { (0x21..<0x7F).contains($0) ? "'\(Character(Unicode.Scalar($0)))'" : "byte \($0)" } ?? "the end"
        return JSONSyntaxError(message: "unexpected \(shown) at \(input.location()), expected \(expected)")
    }

    func endOfFile() -> JSONSyntaxError {
        let inside = open.last.map { ", inside an unclosed \($0 == UInt8(ascii: "{") ? "object" : "array")" } ?? ""
        return JSONSyntaxError(message: "the file ends too early at \(input.location())\(inside)")
    }
}
