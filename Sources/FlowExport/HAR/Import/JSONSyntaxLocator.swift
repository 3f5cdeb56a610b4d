/// Finds the first JSON syntax error in a document and says where it is (line and column), for
/// files `JSONDecoder` refuses with only "The given data was not valid JSON".
///
/// A validator, not a parser: it keeps a stack of open containers and nothing else, so it runs
/// in flat memory over a file of any size and cannot recurse too deep.
enum JSONSyntaxLocator {
    /// "unexpected character '<' at line 1, column 1"; nil when the document is valid JSON.
    static func firstError(in bytes: [UInt8]) -> String? {
        var scanner = Scanner(bytes: bytes)
        return scanner.run()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        /// `{` or `[` for each open container.
        var open: [UInt8] = []

        mutating func run() -> String? {
            skipSpace()
            if let error = value() { return error }
            while let container = open.last {
                skipSpace()
                guard position < bytes.count else { return endOfFile() }
                let closer: UInt8 = container == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if bytes[position] == closer {
                    position += 1
                    open.removeLast()
                    continue
                }
                guard bytes[position] == UInt8(ascii: ",") else {
                    return unexpected(container == UInt8(ascii: "{") ? "',' or '}'" : "',' or ']'")
                }
                position += 1
                skipSpace()
                if container == UInt8(ascii: "{"), let error = member() { return error }
                if container == UInt8(ascii: "["), let error = value() { return error }
            }
            skipSpace()
            return position < bytes.count ? unexpected("the end of the file") : nil
        }

        /// A value; containers are opened and their first element read, the rest is left to `run`.
        mutating func value() -> String? {
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            switch bytes[position] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let opener = bytes[position]
                position += 1
                skipSpace()
                let closer: UInt8 = opener == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if position < bytes.count && bytes[position] == closer {
                    position += 1
                    return nil
                }
                open.append(opener)
                return opener == UInt8(ascii: "{") ? member() : value()
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return unexpected("a value")
            }
        }

        /// `"name": value`
        mutating func member() -> String? {
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            guard bytes[position] == UInt8(ascii: "\"") else { return unexpected("a field name in double quotes") }
            if let error = string() { return error }
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            guard bytes[position] == UInt8(ascii: ":") else { return unexpected("':'") }
            position += 1
            return value()
        }

        mutating func string() -> String? {
            position += 1
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return nil
                case UInt8(ascii: "\\"):
                    position += 1
                    guard position < bytes.count else { return endOfFile() }
                    if bytes[position] == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            position += 1
                            guard position < bytes.count else { return endOfFile() }
                            guard bytes[position].isHexDigit else { return unexpected("a hex digit of a \\u escape") }
                        }
                    } else if !Array("\"\\/bfnrt".utf8).contains(bytes[position]) {
                        return unexpected("an escape character")
                    }
                    position += 1
                case 0..<0x20:
                    return "control character (byte \(byte)) inside a string at \(location())"
                default:
                    position += 1
                }
            }
            return endOfFile()
        }

        mutating func number() -> String? {
            let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, digits.contains(bytes[position]) else { return unexpected("a digit") }
            let allowed = Set(Array("0123456789+-.eE".utf8))
            while position < bytes.count && allowed.contains(bytes[position]) { position += 1 }
            return nil
        }

        mutating func literal(_ word: String) -> String? {
            for expected in word.utf8 {
                guard position < bytes.count else { return endOfFile() }
                guard bytes[position] == expected else { return unexpected("'\(word)'") }
                position += 1
            }
            return nil
        }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        func unexpected(_ expected: String) -> String {
            let byte = bytes[position]
            let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
            return "unexpected \(shown) at \(location()), expected \(expected)"
        }

        func endOfFile() -> String {
            "the file ends too early at \(location())\(open.isEmpty ? "" : ", inside an unclosed \(open.last == UInt8(ascii: "{") ? "object" : "array")")"
        }

        /// `line 3, column 7` (1-based; columns count bytes).
        func location() -> String {
            var line = 1
            var lineStart = 0
            for index in 0..<min(position, bytes.count) where bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            return "line \(line), column \(position - lineStart + 1)"
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
